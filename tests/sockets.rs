//! Sockets: attachment points that follow joints. Each frame the GPU writes every character's
//! socket matrices (`world · model[joint] · offset`) after the palettes; checked against the CPU
//! mirror on the GPU's own model matrices (staged path), against the staged path (fused path),
//! and against the f64 reference.

mod common;

use glam::{DMat4, Mat4, Quat, Vec3};
use rand::Rng;
use rand::rngs::SmallRng;
use wgpu_anim::layout::{GpuFrame, MAX_SOCKETS};
use wgpu_anim::math::{Affine, Transform};
use wgpu_anim::{AnimationLibrary, Animator, AnimatorDesc, InstanceDesc, Skeleton, cpu};

/// Skeletons of 1, 37 and 90 joints: the first without sockets, the others with 1 and 4 sockets
/// on random joints with random offsets (non-uniform scale included).
const SIZES: [usize; 3] = [1, 37, 90];
const SOCKETS: [usize; 3] = [0, 1, 4];

/// A library of those skeletons with random clips, trees and masks
/// (`common::random_library_with_sockets`), its authoring skeletons and clips for the f64
/// reference.
fn library(seed: u64) -> (AnimationLibrary, Vec<Skeleton>, Vec<wgpu_anim::Clip>) {
    let (lib, clips) = common::random_library_with_sockets(seed, &SIZES, &SOCKETS);
    let skeletons = lib.skeletons().to_vec();
    (lib, skeletons, clips)
}

fn world(r: &mut SmallRng) -> Mat4 {
    Mat4::from_scale_rotation_translation(
        Vec3::splat(r.gen_range(0.5..2.0)),
        Quat::from_rotation_y(r.gen_range(-3.0..3.0)),
        Vec3::new(r.gen_range(-50.0..50.0), 0.0, r.gen_range(-50.0..50.0)),
    )
}

/// A crowd in pages of 50: random clips and trees, layers on a third, random world matrices.
fn crowd(device: &wgpu::Device, lib: &AnimationLibrary, n: usize, fused: bool) -> Animator {
    let desc = AnimatorDesc::default()
        .with_max_instances(n as u32)
        .with_page_instances(Some(50));
    let mut a = Animator::new(device, lib, &desc).unwrap();
    let mut r = common::rng(11);
    for i in 0..n {
        let desc = {
            // The fields drawn before the state, as they were.
            let (world, rate) = (world(&mut r), r.gen_range(0.5..1.5));
            common::random_state(&mut r, lib, (i % 3) as u32)
                .with_world(world)
                .with_rate(rate)
        };
        a.controller_mut().add_instance(&desc).unwrap();
    }
    common::random_layers(&mut a, &mut r);
    a.set_fused(fused).unwrap();
    a
}

fn step(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator, dt: f32) {
    a.prepare(queue, dt);
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);
}

#[test]
fn a_socket_needs_a_joint_a_name_of_its_own_and_a_finite_offset() {
    let mut s = common::random_skeleton(&mut common::rng(1), "s", 5);
    let ok = Transform::new(Vec3::X, Quat::IDENTITY, Vec3::ONE);
    assert_eq!(s.add_socket("grip", "s_3", ok).unwrap(), 0);
    let bad = [
        ("grip", "s_1", ok),
        ("", "s_1", ok),
        ("other", "no_such_joint", ok),
        ("other", "s_1", Transform::new(Vec3::NAN, Quat::IDENTITY, Vec3::ONE)),
        (
            "other",
            "s_1",
            Transform::new(Vec3::X, Quat::from_xyzw(0.0, 0.0, 0.0, 2.0), Vec3::ONE),
        ),
    ];
    for (name, joint, offset) in bad {
        let e = s.add_socket(name, joint, offset).unwrap_err().to_string();
        assert!(e.contains("socket"), "{e}");
    }
    for k in 1..MAX_SOCKETS as usize {
        s.add_socket(&format!("s{k}"), "s_0", ok).unwrap();
    }
    let e = s.add_socket("one_more", "s_0", ok).unwrap_err().to_string();
    assert!(e.contains("already has 4 sockets"), "{e}");
    assert_eq!(s.sockets().len(), MAX_SOCKETS as usize);
    assert_eq!(s.socket_index("grip"), Some(0));
    assert_eq!(s.sockets()[0].joint, s.joint_index("s_3").unwrap());
}

/// 150 characters over three pages, three frames on the staged path: every socket matrix equals
/// the CPU mirror's `palette` stage run on the GPU's own model matrices (within 1e-6 relative:
/// the same f32 products); slots past a skeleton's sockets stay zero; one slot off fails.
/// Then the fused path: the same crowd's sockets within 2e-5 of the staged path's.
#[test]
fn socket_matrices_on_the_gpu_match_the_mirror() {
    let (device, queue) = common::device();
    let (lib, _, _) = library(3);
    let n = 150;
    let mut staged = crowd(&device, &lib, n, false);
    let mut fused = crowd(&device, &lib, n, true);
    for dt in [0.0, 0.3, 0.05] {
        step(&device, &queue, &mut staged, dt);
        step(&device, &queue, &mut fused, dt);
    }
    let mut checked = 0;
    for page in 0..staged.controller().pages_in_use() {
        let (_, pose) = staged.read_back_page(&device, &queue, page).unwrap();
        let gpu = staged.read_sockets_page(&device, &queue, page).unwrap();
        let instances = staged.controller().page_instances(page);
        assert_eq!(gpu.len(), instances.len() * MAX_SOCKETS as usize);
        let capacity = staged.controller().page_max_joints(page);
        let frame = GpuFrame {
            dt: 0.0,
            instance_count: instances.len() as u32,
            snapshot_offset: capacity,
            ..Default::default()
        };
        let mut model = pose.model.clone();
        model.resize(capacity as usize, Affine::IDENTITY);
        let mut palettes = vec![Affine::IDENTITY; capacity as usize + gpu.len()];
        palettes[capacity as usize..].fill(bytemuck::Zeroable::zeroed());
        let mut insts = instances.to_vec();
        let mut buffers = cpu::PageBuffers::new(&frame, &mut insts)
            .model_poses(&mut model)
            .palettes(&mut palettes);
        cpu::palette(&lib, &mut buffers).unwrap();
        let want = &palettes[capacity as usize..];
        common::compare("sockets", &gpu, want, 1e-6, common::affine_error).unwrap();
        // Slots past a skeleton's sockets are never written.
        for (k, inst) in instances.iter().enumerate() {
            let used = lib.gpu_skeletons()[inst.skeleton as usize].socket_count as usize;
            for slot in used..MAX_SOCKETS as usize {
                assert_eq!(gpu[k * MAX_SOCKETS as usize + slot], bytemuck::Zeroable::zeroed());
            }
            checked += used;
        }
        // The comparison sees a matrix one slot off.
        assert!(
            common::compare(
                "shifted",
                &gpu[1..],
                &want[..want.len() - 1],
                1e-6,
                common::affine_error
            )
            .is_err()
        );
        // Fused: the same sockets.
        let fused_sockets = fused.read_sockets_page(&device, &queue, page).unwrap();
        common::compare("fused sockets", &fused_sockets, &gpu, 2e-5, common::affine_error).unwrap();
    }
    assert!(checked > 100, "{checked} sockets checked");
}

/// Single clips at random times with random world matrices: each socket matrix within 1e-5 per
/// level of its joint's depth plus 3e-5 (relative) of the f64 reference
/// `world · model(t)[joint] · offset`, as the palettes are, and where
/// [`Animator::socket_slot`] says it is.
#[test]
fn socket_matrices_follow_the_f64_reference() {
    let (device, queue) = common::device();
    let (lib, skeletons, clips) = library(4);
    let mut r = common::rng(5);
    let desc = AnimatorDesc::default()
        .with_max_instances(60)
        .with_page_instances(Some(25));
    let mut a = Animator::new(&device, &lib, &desc).unwrap();
    let mut expected = Vec::new();
    for _ in 0..60 {
        let c = r.gen_range(0..lib.clips().len());
        let time = r.gen_range(0.0..lib.clips()[c].duration);
        let w = world(&mut r);
        a.controller_mut()
            .add_instance(
                &InstanceDesc::new(lib.clip_at(c as u32).unwrap())
                    .with_time(time)
                    .with_rate(0.0)
                    .with_world(w),
            )
            .unwrap();
        let skeleton = &skeletons[lib.clips()[c].skeleton as usize];
        let model = wgpu_anim::reference::local_to_model(
            skeleton,
            &wgpu_anim::reference::sample(skeleton, &clips[c], f64::from(time)),
        );
        let depths = skeleton.depths();
        let sockets: Vec<(DMat4, f32)> = skeleton
            .sockets()
            .iter()
            .map(|s| {
                let want = w.as_dmat4() * model[s.joint] * s.offset.to_mat4().as_dmat4();
                // f32 rounding grows with each level of the hierarchy, the world and the offset.
                (want, 1e-5 * (depths[s.joint] + 3) as f32)
            })
            .collect();
        expected.push(sockets);
    }
    step(&device, &queue, &mut a, 0.0);
    let pages: Vec<Vec<Affine>> = (0..a.controller().pages_in_use())
        .map(|p| a.read_sockets_page(&device, &queue, p).unwrap())
        .collect();
    let mut worst = 0.0f32;
    for (i, sockets) in expected.iter().enumerate() {
        let (page, first) = a.controller().page_of(i).unwrap();
        for (s, (want, tolerance)) in sockets.iter().enumerate() {
            let (p, element) = a.socket_slot(i, s).unwrap();
            let slot = (element - u64::from(a.controller().page_max_joints(p))) as usize;
            assert_eq!((p, slot), (page, first * MAX_SOCKETS as usize + s));
            let got = pages[p][slot];
            let e = common::affine_error(&got, &Affine::from_mat4(&want.as_mat4()));
            worst = worst.max(e);
            assert!(
                e < *tolerance,
                "instance {i} socket {s}: off by {e:e} (tolerance {tolerance:e})"
            );
        }
        assert_eq!(a.socket_slot(i, sockets.len()), None);
    }
    assert!(worst > 0.0, "the comparison compares something");
}

/// A library without sockets keeps no socket matrices: the palette buffer is the joints'
/// palettes alone.
#[test]
fn without_sockets_nothing_is_kept() {
    let (device, queue) = common::device();
    let (lib, _) = common::random_library_of(3, &[5]);
    assert!(!lib.has_sockets());
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    a.controller_mut()
        .add_instance(&InstanceDesc::new(lib.clip_at(0).unwrap()))
        .unwrap();
    step(&device, &queue, &mut a, 0.1);
    assert!(a.read_sockets_page(&device, &queue, 0).unwrap().is_empty());
    assert_eq!(a.socket_slot(0, 0), None);
    assert_eq!(
        a.palette_buffer().size(),
        u64::from(a.max_joints()) * size_of::<Affine>() as u64
    );
}

/// The crowd demo's mannequin with its sword ([`wgpu_anim::mannequin::sword`]) in the grip socket:
/// drawn by a `PropRenderer`, the sword's pixels (where the picture with it differs from the one
/// without) gather around where the socket matrix puts the blade's middle, projected by the
/// camera; a holder that has no such socket is refused by name.
#[test]
fn a_prop_is_drawn_where_its_socket_is() {
    use wgpu_anim::gpu::{Camera, OffscreenTarget, PropRenderer};
    use wgpu_anim::mannequin;
    const W: u32 = 320;
    const H: u32 = 240;
    let (device, queue) = common::device();
    let (lib, skeleton, clips) = mannequin::library_of(mannequin::skeleton_with_grip());
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    a.controller_mut()
        .add_instance(&InstanceDesc::new(clips[1]).with_time(0.3))
        .unwrap();
    step(&device, &queue, &mut a, 0.0);
    let mesh = mannequin::mannequin().mesh;
    let (format, depth) = (OffscreenTarget::COLOR_FORMAT, Some(OffscreenTarget::DEPTH_FORMAT));
    let body = wgpu_anim::SkinnedRenderer::new(&device, &a, skeleton, &mesh, format, depth, 1).unwrap();
    let sword = mannequin::sword();
    let props = PropRenderer::new(&device, &a, &sword, 0, &[0], [0.8, 0.8, 0.8], format, depth, 1).unwrap();
    let camera = Camera::look_at(
        Vec3::new(1.2, 1.4, 2.6),
        Vec3::new(0.0, 0.9, 0.0),
        0.8,
        W as f32 / H as f32,
        0.1,
        50.0,
    );
    body.set_camera(&queue, &camera);
    props.set_camera(&queue, &camera);
    let target = OffscreenTarget::new(&device, W, H).unwrap();
    let picture = |with_prop: bool| {
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let (mut pass, _views) = target.begin_pass(&mut encoder, wgpu::Color::BLACK);
            body.draw(&mut pass, &a, 0..1).unwrap();
            if with_prop {
                props.draw(&mut pass, &a);
            }
        }
        queue.submit([encoder.finish()]);
        target.read_rgba(&device, &queue).unwrap()
    };
    let (with, without) = (picture(true), picture(false));
    let (mut n, mut sum) = (0usize, glam::Vec2::ZERO);
    for (k, (p, q)) in with.chunks_exact(4).zip(without.chunks_exact(4)).enumerate() {
        if p != q {
            n += 1;
            sum += glam::Vec2::new((k as u32 % W) as f32, (k as u32 / W) as f32);
        }
    }
    assert!(n > 30, "the sword covers {n} pixels");
    // Where the socket matrix puts the blade's middle (0, 0.52, 0), on screen.
    let (page, element) = a.socket_slot(0, 0).unwrap();
    let m = a.read_sockets_page(&device, &queue, page).unwrap()
        [(element - u64::from(a.controller().page_max_joints(page))) as usize];
    let blade = m.transform_point3(Vec3::new(0.0, 0.52, 0.0));
    let clip = camera.view_proj * blade.extend(1.0);
    let ndc = clip.truncate() / clip.w;
    let screen = glam::Vec2::new((ndc.x + 1.0) * 0.5 * W as f32, (1.0 - ndc.y) * 0.5 * H as f32);
    let centroid = sum / n as f32;
    assert!(
        centroid.distance(screen) < 12.0,
        "the sword's pixels gather at {centroid}, the socket puts its middle at {screen}"
    );
    // A holder without the socket: an error naming it.
    let e = PropRenderer::new(&device, &a, &sword, 1, &[0], [1.0; 3], format, depth, 1)
        .err()
        .expect("socket 1 does not exist");
    assert!(e.to_string().contains("instance 0"), "{e}");
}
