//! Headless rendering: characters are drawn where they should be, and the picture moves.
//!
//! Three mannequins stand at known places in front of a fixed camera over a plain background. For
//! each, the screen box of its skinned vertices is computed on the CPU (CPU mirror palette →
//! skinning → world → projection). Covered pixels must lie inside those boxes (2 px margin), each
//! box must be substantially covered, and the picture must differ between two times.

mod common;

use glam::{Mat4, Quat, Vec3, Vec4Swizzles};
use wgpu_anim::gpu::{Camera, OffscreenTarget};
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, SkinnedRenderer, cpu, mannequin};

const W: u32 = 480;
const H: u32 = 270;
const CLEAR: wgpu::Color = wgpu::Color {
    r: 0.0,
    g: 0.0,
    b: 0.0,
    a: 1.0,
};

struct Scene {
    device: wgpu::Device,
    queue: wgpu::Queue,
    animator: Animator,
    renderer: SkinnedRenderer,
    target: OffscreenTarget,
    camera: Camera,
}

fn scene() -> Scene {
    let (device, queue) = common::device();
    let m = mannequin::mannequin();
    let (lib, skel, clips) = mannequin::library();
    let mut animator = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    for (k, x) in [-2.5f32, 0.0, 2.5].into_iter().enumerate() {
        animator
            .controller_mut()
            .add_instance(
                &InstanceDesc::new(clips[k]) // idle, walk, run
                    .with_world(Mat4::from_rotation_translation(
                        Quat::from_rotation_y(0.4 * k as f32),
                        Vec3::new(x, 0.0, 0.0),
                    ))
                    .with_tint([255, 200, 150, 255]),
            )
            .unwrap();
    }
    let renderer = SkinnedRenderer::new(
        &device,
        &animator,
        skel,
        &m.mesh,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )
    .unwrap();
    let target = OffscreenTarget::new(&device, W, H).unwrap();
    let camera = Camera::look_at(
        Vec3::new(0.0, 1.2, 7.0),
        Vec3::new(0.0, 0.9, 0.0),
        45f32.to_radians(),
        W as f32 / H as f32,
        0.1,
        100.0,
    );
    renderer.set_camera(&queue, &camera);
    Scene {
        device,
        queue,
        animator,
        renderer,
        target,
        camera,
    }
}

fn render(s: &mut Scene, dt: f32) -> Vec<u8> {
    s.animator.prepare(&s.queue, dt);
    let mut encoder = s.device.create_command_encoder(&Default::default());
    s.animator.encode(&mut encoder).unwrap();
    {
        let (mut pass, _views) = s.target.begin_pass(&mut encoder, CLEAR);
        s.renderer
            .draw(
                &mut pass,
                &s.animator,
                0..s.animator.controller().instance_count() as u32,
            )
            .unwrap();
    }
    s.queue.submit([encoder.finish()]);
    s.target.read_rgba(&s.device, &s.queue).unwrap()
}

/// Screen boxes `(x0, y0, x1, y1)` in pixels of every instance, from the CPU mirror.
fn screen_boxes(s: &Scene) -> Vec<[f32; 4]> {
    let lists = s.animator.read_blend_lists(&s.device, &s.queue).unwrap();
    let pose = cpu::evaluate(
        s.animator.controller().library(),
        s.animator.controller().instances(),
        &lists,
    )
    .unwrap();
    let mut mesh = mannequin::mannequin().mesh;
    mesh.validate(mannequin::skeleton().joint_count()).unwrap();
    let verts = mesh.gpu_vertices();
    s.animator
        .controller()
        .instances()
        .iter()
        .map(|inst| {
            let skinned = cpu::skin(&pose.palette, inst.joint_offset, &verts).unwrap();
            let mut b = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
            for p in skinned {
                let world = inst.world.transform_point3(p.position.xyz());
                let clip = s.camera.view_proj * world.extend(1.0);
                let ndc = clip.xyz() / clip.w;
                let (x, y) = ((ndc.x * 0.5 + 0.5) * W as f32, (0.5 - ndc.y * 0.5) * H as f32);
                b = [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)];
            }
            b
        })
        .collect()
}

fn covered(img: &[u8], x: u32, y: u32) -> bool {
    let i = ((y * W + x) * 4) as usize;
    img[i] > 8 || img[i + 1] > 8 || img[i + 2] > 8
}

#[test]
fn characters_are_drawn_inside_their_screen_boxes_and_move() {
    let mut s = scene();
    let first = render(&mut s, 0.0);
    let boxes = screen_boxes(&s);
    let margin = 2.0;
    let mut inside = vec![0usize; boxes.len()];
    for y in 0..H {
        for x in 0..W {
            if !covered(&first, x, y) {
                continue;
            }
            let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
            let hit = boxes
                .iter()
                .position(|b| px >= b[0] - margin && px <= b[2] + margin && py >= b[1] - margin && py <= b[3] + margin);
            match hit {
                Some(k) => inside[k] += 1,
                None => panic!("pixel ({x}, {y}) is covered but lies outside every character's box {boxes:?}"),
            }
        }
    }
    for (k, b) in boxes.iter().enumerate() {
        let area = (b[2] - b[0]) * (b[3] - b[1]);
        assert!(area > 500.0, "character {k} is too small on screen: {b:?}");
        let share = inside[k] as f32 / area;
        assert!(
            share > 0.15,
            "character {k} covers only {:.0}% of its box {b:?}",
            share * 100.0
        );
    }
    let later = render(&mut s, 0.3);
    let changed = first
        .chunks_exact(4)
        .zip(later.chunks_exact(4))
        .filter(|(a, b)| a != b)
        .count();
    assert!(changed > 200, "only {changed} pixels changed in 0.3 s");
    // The boxes move with the animation too, and the new picture still fits them.
    let later_boxes = screen_boxes(&s);
    assert_ne!(boxes, later_boxes);
}

#[test]
fn the_box_check_fails_for_a_character_drawn_in_the_wrong_place() {
    let mut s = scene();
    let boxes = screen_boxes(&s);
    // Move the middle character one metre up: its pixels leave the boxes computed for the
    // original place, which the check above would catch.
    s.animator
        .controller_mut()
        .set_world(1, Mat4::from_translation(Vec3::new(0.0, 1.0, 0.0)))
        .unwrap();
    let img = render(&mut s, 0.0);
    let outside = (0..H)
        .flat_map(|y| (0..W).map(move |x| (x, y)))
        .filter(|&(x, y)| covered(&img, x, y))
        .filter(|&(x, y)| {
            let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
            !boxes
                .iter()
                .any(|b| px >= b[0] - 2.0 && px <= b[2] + 2.0 && py >= b[1] - 2.0 && py <= b[3] + 2.0)
        })
        .count();
    assert!(outside > 100, "{outside} pixels outside the boxes");
}
