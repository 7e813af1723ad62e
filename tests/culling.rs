//! Culling on the GPU: the clock marks the characters a view sees, the cull stage lists them, and
//! the later stages run over the list by indirect dispatch. Checked against an animator that does
//! not cull, playing the same crowd frame by frame while the camera turns and characters start
//! transitions of every kind, seen or not:
//! - clocks, root motion, float curves and events equal, bit for bit, for every character;
//! - every listed character's palette equal, bit for bit (also on the frame it comes into view);
//! - every character left out keeps last frame's palette (poisoned beforehand: nothing writes it);
//! - the marks and the list equal the CPU mirror's (`cpu::cull`), and a wrong view in the mirror
//!   fails that comparison;
//! - the fused path culls the same;
//! - a culled draw renders the picture a full draw renders;
//! - bad input is refused.

mod common;

use glam::{Mat4, Quat, Vec3};
use rand::Rng;
use wgpu_anim::cpu;
use wgpu_anim::gpu::{Camera, Transition};
use wgpu_anim::layout::{FRAME_CULL, FRAME_CULL_VIEW, GpuClock, GpuFrame, GpuInstance, GpuOutput, frustum_planes};
use wgpu_anim::shaders::Resource;
use wgpu_anim::{Affine, Animator, AnimatorDesc, InstanceDesc, mannequin};

const COUNT: usize = 300;

fn animator(device: &wgpu::Device, lib: &wgpu_anim::AnimationLibrary, culling: bool) -> Animator {
    Animator::new(
        device,
        lib,
        &AnimatorDesc::default()
            .with_max_instances(COUNT as u32)
            .with_inertialization(true)
            .with_culling(culling),
    )
    .unwrap()
}

/// The camera of frame `f`: on a circle around the crowd, looking past its middle, so that
/// characters come into view and leave it.
fn view(f: usize) -> Mat4 {
    let angle = f as f32 * 0.05;
    let eye = Vec3::new(60.0 * angle.cos(), 12.0, 60.0 * angle.sin());
    let target = Vec3::new(10.0 * angle.sin(), 0.0, -10.0 * angle.cos());
    Camera::look_at(eye, target, 0.6, 1.5, 0.5, 200.0).view_proj
}

/// The same crowd in every animator: gaits at random phases on a 100 m square, most moving by
/// root motion, events watched.
fn crowd(device: &wgpu::Device, animators: &mut [&mut Animator], clips: &[wgpu_anim::ClipId]) {
    let mut r = common::rng(3);
    for i in 0..COUNT {
        // In the order the generator gave them before.
        let (time, rate) = (r.gen_range(0.0..2.0), r.gen_range(0.8..1.2));
        let world = Mat4::from_rotation_translation(
            Quat::from_rotation_y(r.gen_range(-3.0..3.0)),
            Vec3::new(r.gen_range(-50.0..50.0), 0.0, r.gen_range(-50.0..50.0)),
        );
        let desc = InstanceDesc::new(clips[r.gen_range(0..clips.len())])
            .with_time(time)
            .with_rate(rate)
            .with_world(world);
        for a in animators.iter_mut() {
            a.controller_mut().add_instance(&desc).unwrap();
            if i % 4 != 0 {
                a.controller_mut().set_root_motion(i, true).unwrap();
            }
        }
    }
    for a in animators.iter_mut() {
        a.watch_events(device, 4096).unwrap();
    }
}

/// Random plays with every kind of transition, the same in every animator.
fn transitions(r: &mut impl Rng, animators: &mut [&mut Animator], clips: &[wgpu_anim::ClipId]) {
    for _ in 0..12 {
        let i = r.gen_range(0..COUNT);
        let desc = InstanceDesc::new(clips[r.gen_range(0..clips.len())]).with_world(Mat4::IDENTITY);
        let transition = match r.gen_range(0..4) {
            0 => None,
            1 => Some(Transition::linear(0.3)),
            2 => Some(Transition::inertialize(0.3)),
            _ => Some(Transition::dead_blend(0.3)),
        };
        for a in animators.iter_mut() {
            a.controller_mut().play(i, &desc, transition).unwrap();
        }
    }
}

fn step(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator, dt: f32) {
    a.prepare(queue, dt);
    let mut e = device.create_command_encoder(&Default::default());
    a.encode(&mut e).unwrap();
    queue.submit([e.finish()]);
}

fn palettes(device: &wgpu::Device, queue: &wgpu::Queue, a: &Animator) -> Vec<Affine> {
    let joints = u64::from(a.controller().page_state(0).unwrap().joints_used);
    a.read_page_buffer(device, queue, 0, Resource::Palettes, 0, joints)
        .unwrap()
}

fn clocks(device: &wgpu::Device, queue: &wgpu::Queue, a: &Animator) -> Vec<GpuClock> {
    a.read_page_buffer(device, queue, 0, Resource::CharacterState, 0, COUNT as u64)
        .unwrap()
}

/// An output without culling's mark.
fn unmarked(mut o: GpuOutput) -> GpuOutput {
    o.evaluate = 0;
    o
}

/// Palettes of a pose no frame computes: what an instance left out keeps.
fn poison(queue: &wgpu::Queue, a: &Animator) {
    let joints = a.controller().page_state(0).unwrap().joints_used as usize;
    let poison = vec![Affine::from_mat4(&Mat4::from_scale(Vec3::splat(-7.0))); joints];
    queue.write_buffer(a.page_palette_buffer(0).unwrap(), 0, bytemuck::cast_slice(&poison));
}

/// The frame the culling animator's stages saw (its flags and planes), for the mirror.
fn cull_frame(a: &Animator) -> GpuFrame {
    GpuFrame {
        instance_count: COUNT as u32,
        frame: a.frame() as u32,
        flags: FRAME_CULL
            | if a.controller().cull_planes().is_some() {
                FRAME_CULL_VIEW
            } else {
                0
            },
        cull_planes: a.controller().cull_planes().unwrap_or([glam::Vec4::W; 6]),
        ..GpuFrame::default()
    }
}

/// The mirror's marks from the GPU's own instances (worlds as the clock left them) and blend
/// lists, and the marks of the frame before (`previous`).
fn mirror_marks(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    a: &Animator,
    frame: &GpuFrame,
    previous: &[u32],
) -> Vec<u32> {
    let instances: Vec<GpuInstance> = a
        .read_page_buffer(device, queue, 0, Resource::Instances, 0, COUNT as u64)
        .unwrap();
    let lists = a.read_blend_lists(device, queue).unwrap();
    (0..COUNT)
        .map(|i| cpu::cull::marks(frame, &instances[i], i as u32, &lists[i], previous[i]))
        .collect()
}

/// Culled and unculled runs of the same crowd, frame by frame, on the staged and the fused path.
#[test]
fn a_culled_crowd_plays_as_a_full_one() {
    let (device, queue) = common::device();
    let (lib, _, clips) = mannequin::library_with_root_motion(mannequin::mannequin().skeleton);
    // (culled, full) on the staged path, then on the fused one.
    let mut runs: Vec<Animator> = (0..4).map(|k| animator(&device, &lib, k % 2 == 0)).collect();
    for (k, a) in runs.iter_mut().enumerate() {
        a.set_fused(k >= 2).unwrap();
    }
    crowd(&device, &mut runs.iter_mut().collect::<Vec<_>>(), &clips);
    let mut r = common::rng(11);
    let (mut seen_min, mut seen_max, mut entered, mut kept) = (COUNT, 0, 0, 0);
    let mut previous_list: Vec<u32> = Vec::new();
    // Characters whose inertialized transition took its velocity from the pose shown in the full
    // staged run (inertia::LAST_POSE), which with culling is sampled again at the previous
    // frame's times (a character may not have been evaluated): the same within rounding, so
    // their palettes compare within 1e-4 from then on, bit for bit before.
    let mut estimated = vec![false; COUNT];
    let mut from_last_pose = 0;
    for f in 0..40 {
        if f % 3 == 1 {
            transitions(&mut r, &mut runs.iter_mut().collect::<Vec<_>>(), &clips);
        }
        let mut marks_of_path = Vec::new();
        for pair in runs.chunks_mut(2) {
            let [culled, full] = pair else { unreachable!() };
            let path = if culled.is_fused() { "fused" } else { "staged" };
            culled.controller_mut().set_cull_view(Some(view(f))).unwrap();
            let before = palettes(&device, &queue, culled);
            let previous: Vec<u32> = culled
                .read_outputs_page(&device, &queue, 0)
                .unwrap()
                .iter()
                .map(|o| o.evaluate)
                .collect();
            step(&device, &queue, culled, 1.0 / 30.0);
            step(&device, &queue, full, 1.0 / 30.0);
            for (i, l) in full.read_blend_lists(&device, &queue).unwrap().iter().enumerate() {
                if l.inertia & wgpu_anim::layout::inertia::LAST_POSE != 0 {
                    (estimated[i], from_last_pose) = (true, from_last_pose + 1);
                }
            }
            // Every clock, output and event equal.
            assert_eq!(
                clocks(&device, &queue, culled),
                clocks(&device, &queue, full),
                "{path} frame {f}: clocks"
            );
            let outputs = culled.read_outputs_page(&device, &queue, 0).unwrap();
            let full_outputs = full.read_outputs_page(&device, &queue, 0).unwrap();
            for (i, (a, b)) in outputs.iter().zip(&full_outputs).enumerate() {
                assert_eq!(
                    unmarked(*a),
                    unmarked(*b),
                    "{path} frame {f}, instance {i}: root motion or curves"
                );
            }
            let sorted = |mut e: Vec<wgpu_anim::layout::GpuEventRecord>| {
                e.sort_by_key(|r| (r.character, r.event, r.clip, r.state, r.crossings));
                e
            };
            let (events, lost) = culled.read_events(&device, &queue).unwrap();
            let (full_events, full_lost) = full.read_events(&device, &queue).unwrap();
            assert_eq!(
                (sorted(events), lost),
                (sorted(full_events), full_lost),
                "{path} frame {f}: events"
            );
            // The marks against the mirror (the staged path's blend lists are in memory; the
            // fused path's are not, and its marks must be the staged path's), the list too.
            let frame = cull_frame(culled);
            let marks: Vec<u32> = outputs.iter().map(|o| o.evaluate).collect();
            if culled.is_fused() {
                assert_eq!(&marks, &marks_of_path[0], "{path} frame {f}: marks");
            } else {
                assert_eq!(
                    marks,
                    mirror_marks(&device, &queue, culled, &frame, &previous),
                    "{path} frame {f}: marks"
                );
                if f == 5 {
                    // The comparison can fail: the mirror with another view marks others.
                    let wrong = GpuFrame {
                        cull_planes: frustum_planes(view(f + 8)),
                        ..frame
                    };
                    assert_ne!(
                        marks,
                        mirror_marks(&device, &queue, culled, &wrong, &previous),
                        "a wrong view is caught"
                    );
                }
            }
            let (head, lists) = culled.read_visible_page(&device, &queue, 0).unwrap();
            assert_eq!(
                (head, lists.clone()),
                cpu::cull::cull(
                    &frame,
                    &outputs,
                    COUNT as u32,
                    culled.character_threads().characters_per_workgroup()
                ),
                "{path} frame {f}: the lists"
            );
            assert_eq!(culled.read_visible_head(&device, &queue, 0).unwrap(), head);
            let (list, drawn) = (lists.evaluated, lists.drawn);
            // At rate 1 everything drawn is evaluated.
            assert!(
                drawn.iter().all(|i| list.contains(i)),
                "{path} frame {f}: drawn, not evaluated"
            );
            marks_of_path.push(marks);
            // Listed characters: the full run's palettes, bit for bit; the others: untouched.
            let (got, want) = (palettes(&device, &queue, culled), palettes(&device, &queue, full));
            for (i, inst) in culled.controller().instances().iter().enumerate() {
                let joints = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
                if list.contains(&(i as u32)) && estimated[i] && !culled.is_fused() {
                    common::compare(
                        "palette",
                        &got[joints.clone()],
                        &want[joints],
                        1e-4,
                        common::affine_error,
                    )
                    .unwrap_or_else(|e| panic!("{path} frame {f}, instance {i}: evaluated palette: {e}"));
                    entered += usize::from(f > 0 && !previous_list.contains(&(i as u32)));
                } else if list.contains(&(i as u32)) {
                    assert_eq!(
                        got[joints.clone()],
                        want[joints],
                        "{path} frame {f}, instance {i}: evaluated palette"
                    );
                    entered += usize::from(f > 0 && !previous_list.contains(&(i as u32)));
                } else {
                    assert_eq!(
                        got[joints.clone()],
                        before[joints],
                        "{path} frame {f}, instance {i}: culled palette written"
                    );
                    kept += 1;
                }
            }
            seen_min = seen_min.min(list.len());
            seen_max = seen_max.max(list.len());
            if culled.is_fused() {
                previous_list = list;
            }
            if f == 0 {
                // From now on a character left out keeps a pose no frame computes.
                poison(&queue, culled);
            }
        }
    }
    let estimated = estimated.iter().filter(|&&e| e).count();
    eprintln!(
        "listed {seen_min} to {seen_max} of {COUNT}; {entered} entries into view; {kept} character-frames left out; \
         {from_last_pose} velocities from the pose shown in the full run, {estimated} characters compared within 1e-4"
    );
    assert!(estimated < COUNT, "most characters compare bit for bit");
    assert!(
        seen_min > 10 && seen_max < COUNT - 10,
        "the view sees part of the crowd"
    );
    assert!(
        entered > 20 && kept > 1000,
        "characters come into view and are left out"
    );
}

/// A culled draw renders, pixel for pixel, the picture a full draw of a full animator renders:
/// nothing seen is left out (the bounds hold each mesh: `AnimationLibrary::mesh_radius`), and the
/// CPU records the same commands whatever is seen.
#[test]
fn a_culled_draw_renders_the_full_picture() {
    use wgpu_anim::SkinnedRenderer;
    use wgpu_anim::gpu::OffscreenTarget;
    let (device, queue) = common::device();
    let m = mannequin::mannequin();
    let (lib, skeleton, clips) = mannequin::library();
    let radius = lib.mesh_radius(skeleton, &m.mesh).unwrap();
    let joint_radius = lib.skeleton_radius(skeleton).unwrap();
    eprintln!("mannequin: joints within {joint_radius:.2} m of the origin, the mesh within {radius:.2} m");
    assert!(
        radius > joint_radius && radius < 4.0,
        "a mesh reaches past its joints, not absurdly"
    );
    let (w, h) = (320, 180);
    let camera = Camera::look_at(
        Vec3::new(1.0, 1.2, 16.0),
        Vec3::new(0.0, 1.0, 0.0),
        0.9,
        w as f32 / h as f32,
        0.1,
        100.0,
    );
    let mut runs: Vec<(Animator, SkinnedRenderer)> = [true, false]
        .into_iter()
        .map(|culling| {
            let desc = AnimatorDesc::default().with_max_instances(400).with_culling(culling);
            let mut a = Animator::new(&device, &lib, &desc).unwrap();
            for i in 0..400 {
                let (x, z) = ((i % 20) as f32 * 3.0 - 30.0, (i / 20) as f32 * 3.0 - 30.0);
                let desc = InstanceDesc::new(clips[i % clips.len()])
                    .with_time(i as f32 * 0.13)
                    .with_world(Mat4::from_rotation_translation(
                        Quat::from_rotation_y(i as f32),
                        Vec3::new(x, 0.0, z),
                    ));
                a.controller_mut().add_instance(&desc).unwrap();
            }
            if culling {
                a.controller_mut().set_bounds(skeleton, radius).unwrap();
                a.controller_mut().set_cull_view(Some(camera.view_proj)).unwrap();
            }
            let (color, depth) = (OffscreenTarget::COLOR_FORMAT, Some(OffscreenTarget::DEPTH_FORMAT));
            let r = SkinnedRenderer::new(&device, &a, skeleton, &m.mesh, color, depth, 1).unwrap();
            r.set_camera(&queue, &camera);
            (a, r)
        })
        .collect();
    let target = OffscreenTarget::new(&device, w, h).unwrap();
    // A frame of `dt`, drawn: its picture.
    let render = |a: &mut Animator, r: &SkinnedRenderer, dt: f32| {
        a.prepare(&queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        r.encode(&mut encoder, a);
        {
            let (mut pass, _views) = target.begin_pass(&mut encoder, wgpu::Color::BLACK);
            r.draw_visible(&mut pass, a).unwrap();
        }
        queue.submit([encoder.finish()]);
        target.read_rgba(&device, &queue).unwrap()
    };
    let mut pictures = Vec::new();
    for (a, r) in &mut runs {
        let mut picture = Vec::new();
        for _ in 0..3 {
            picture = render(a, r, 0.1);
        }
        pictures.push(picture);
    }
    let (head, ..) = runs[0].0.read_visible_page(&device, &queue, 0).unwrap();
    let covered = pictures[1].chunks(4).filter(|p| p[..3] != [0, 0, 0]).count();
    eprintln!("{} of 400 characters drawn; {covered} pixels covered", head.count);
    assert!(
        head.count > 20 && head.count < 300,
        "the view sees part of the crowd: {}",
        head.count
    );
    assert!(covered > 2000, "the picture shows characters");
    let differ = pictures[0]
        .chunks(4)
        .zip(pictures[1].chunks(4))
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(differ, 0, "pixels that differ between the culled and the full picture");
    // The comparison can fail: bounds that do not hold the mesh leave seen parts out.
    let (a, r) = &mut runs[0];
    a.controller_mut().set_bounds(skeleton, 0.0).unwrap();
    let tight = render(a, r, 0.0);
    let differ = tight
        .chunks(4)
        .zip(pictures[0].chunks(4))
        .filter(|(a, b)| a != b)
        .count();
    assert!(differ > 0, "bounds too small cut characters at the picture's edge");
    // The same commands whatever is seen: one more dispatch per page, the cull pass.
    assert_eq!(runs[0].0.dispatches_per_frame(), runs[1].0.dispatches_per_frame() + 1);
}

/// The sphere test is conservative: for random worlds (rotations, non-uniform scales, shears)
/// and random views, a sphere any of whose sampled points is inside the frustum is never culled;
/// and a sphere behind the camera is.
#[test]
fn the_sphere_test_never_culls_what_is_seen() {
    let mut r = common::rng(7);
    let (mut tested, mut culled) = (0, 0);
    let v =
        |r: &mut rand::rngs::SmallRng, s: f32| Vec3::new(r.gen_range(-s..s), r.gen_range(-s..s), r.gen_range(-s..s));
    for _ in 0..2000 {
        let eye = v(&mut r, 20.0);
        let target = v(&mut r, 5.0);
        let cam = Camera::look_at(
            eye,
            target,
            r.gen_range(0.3..1.5),
            r.gen_range(0.5..2.0),
            0.1,
            r.gen_range(20.0..80.0),
        );
        let planes = frustum_planes(cam.view_proj);
        let linear = glam::Mat3::from_cols(v(&mut r, 2.0), v(&mut r, 2.0), v(&mut r, 2.0));
        let world = Mat4::from_mat3_translation(linear, v(&mut r, 30.0));
        let radius = r.gen_range(0.1..3.0);
        let seen = cpu::cull::sphere_in_view(&Affine::from_mat4(&world), radius, &planes);
        for _ in 0..64 {
            let p = v(&mut r, 1.0).normalize_or_zero() * radius * r.gen_range(0.0f32..1.0).cbrt();
            let clip = cam.view_proj * world.transform_point3(p).extend(1.0);
            let inside =
                clip.w > 0.0 && clip.x.abs() <= clip.w && clip.y.abs() <= clip.w && (0.0..=clip.w).contains(&clip.z);
            assert!(!inside || seen, "a point of the sphere is seen, and the sphere culled");
        }
        tested += 1;
        culled += usize::from(!seen);
    }
    assert!(culled > 200 && culled < tested - 200, "{culled} of {tested} culled");
    let cam = Camera::look_at(Vec3::ZERO, Vec3::NEG_Z, 1.0, 1.0, 0.1, 100.0);
    let behind = Affine::from_mat4(&Mat4::from_translation(Vec3::new(0.0, 0.0, 10.0)));
    assert!(!cpu::cull::sphere_in_view(&behind, 1.0, &frustum_planes(cam.view_proj)));
    assert!(cpu::cull::sphere_in_view(&behind, 10.5, &frustum_planes(cam.view_proj)));
}

/// Bad input is refused, naming what is wrong, and nothing changes.
#[test]
fn bad_culling_input_is_refused() {
    let (device, _queue) = common::device();
    let (lib, skeleton, clips) = mannequin::library();
    let mut plain = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    let e = plain
        .controller_mut()
        .set_cull_view(Some(Mat4::IDENTITY))
        .unwrap_err()
        .to_string();
    assert!(e.contains("AnimatorDesc::culling"), "{e}");
    let desc = AnimatorDesc::default().with_culling(true);
    let mut a = Animator::new(&device, &lib, &desc).unwrap();
    a.controller_mut().add_instance(&InstanceDesc::new(clips[0])).unwrap();
    let e = a
        .controller_mut()
        .set_cull_view(Some(Mat4::from_scale(Vec3::splat(f32::NAN))))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not finite"), "{e}");
    let controller = a.controller_mut();
    assert_eq!(controller.cull_planes(), None, "nothing changed");
    let before = controller.instances()[0].bound_radius;
    for radius in [f32::NAN, -1.0, f32::INFINITY, 1e13] {
        let e = controller.set_bounds(skeleton, radius).unwrap_err().to_string();
        assert!(e.contains("radius") && e.contains("mannequin"), "{e}");
    }
    assert_eq!(controller.instances()[0].bound_radius, before, "nothing changed");
    let (_, other_skeleton, _) = mannequin::library();
    assert!(
        a.controller_mut().set_bounds(other_skeleton, 1.0).is_err(),
        "a skeleton of another library"
    );
    a.controller_mut().set_bounds(skeleton, 2.5).unwrap();
    assert_eq!(a.controller().instances()[0].bound_radius, 2.5);
}
