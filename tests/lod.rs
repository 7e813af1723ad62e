//! Update-rate LOD on the GPU: characters evaluated every 1, 2, 4 or 8 frames, by their own rate
//! or by their projected size, staggered so that every frame carries an even share; drawn in
//! between with the palette of their last evaluation; evaluated at once when they come into view.
//! Against the CPU mirror's marks (`cpu::cull::marks`) and an animator that evaluates everyone
//! every frame.

mod common;

use glam::{Mat4, Quat, Vec3, Vec4};
use wgpu_anim::cpu;
use wgpu_anim::gpu::Camera;
use wgpu_anim::layout::{
    FRAME_CULL, FRAME_CULL_VIEW, GpuFrame, GpuInstance, MARK_DRAWN, MARK_EVALUATE, UPDATE_RATES, frustum_planes,
};
use wgpu_anim::shaders::Resource;
use wgpu_anim::{Affine, Animator, AnimatorDesc, InstanceDesc, mannequin};

fn animator(device: &wgpu::Device, lib: &wgpu_anim::AnimationLibrary, n: usize, culling: bool) -> Animator {
    let desc = AnimatorDesc::default()
        .with_max_instances(n as u32)
        .with_culling(culling);
    Animator::new(device, lib, &desc).unwrap()
}

fn step(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator) {
    a.prepare(queue, 1.0 / 30.0);
    let mut e = device.create_command_encoder(&Default::default());
    a.encode(&mut e).unwrap();
    queue.submit([e.finish()]);
}

fn marks(device: &wgpu::Device, queue: &wgpu::Queue, a: &Animator) -> Vec<u32> {
    a.read_outputs_page(device, queue, 0)
        .unwrap()
        .iter()
        .map(|o| o.evaluate)
        .collect()
}

fn palettes(device: &wgpu::Device, queue: &wgpu::Queue, a: &Animator) -> Vec<Affine> {
    let joints = u64::from(a.controller().page_state(0).unwrap().joints_used);
    a.read_page_buffer(device, queue, 0, Resource::Palettes, 0, joints)
        .unwrap()
}

/// Instance `i`'s joints in the palettes.
fn joints(a: &Animator, i: usize) -> std::ops::Range<usize> {
    let inst = &a.controller().instances()[i];
    inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize
}

/// The frame `a`'s stages saw last, as far as the marks read it.
fn lod_frame(a: &Animator, n: usize) -> GpuFrame {
    let view = a.controller().cull_planes().is_some();
    GpuFrame {
        instance_count: n as u32,
        frame: a.frame() as u32,
        flags: FRAME_CULL | if view { FRAME_CULL_VIEW } else { 0 },
        cull_planes: a.controller().cull_planes().unwrap_or([Vec4::W; 6]),
        ..GpuFrame::default()
    }
}

/// Every character at its own rate (1, 2, 4, 8 in turn), no view: each is evaluated exactly on
/// the frames its rate and index make due (after its first, where all are), and otherwise keeps
/// its palette bit for bit; an evaluated one has the palette of an animator that evaluates
/// everyone every frame; every frame evaluates an even share; on both paths.
#[test]
fn own_rates_stagger_evaluation_and_hold_the_pose_between() {
    let (device, queue) = common::device();
    let (lib, _, clips) = mannequin::library();
    const N: usize = 400;
    for fused in [false, true] {
        let (mut lod, mut full) = (animator(&device, &lib, N, true), animator(&device, &lib, N, false));
        for a in [&mut lod, &mut full] {
            a.set_fused(fused).unwrap();
            for i in 0..N {
                a.controller_mut()
                    .add_instance(
                        &InstanceDesc::new(clips[i % clips.len()])
                            .with_time(i as f32 * 0.07)
                            .with_world(Mat4::from_translation(Vec3::new((i % 20) as f32, 0.0, (i / 20) as f32))),
                    )
                    .unwrap();
            }
        }
        for i in 0..N {
            lod.controller_mut()
                .set_update_rate(i, Some(UPDATE_RATES[i % 4]))
                .unwrap();
        }
        let mut counts = Vec::new();
        let mut evaluations = vec![0u32; N];
        let mut before = palettes(&device, &queue, &lod);
        for f in 0..17 {
            let previous = marks(&device, &queue, &lod);
            step(&device, &queue, &mut lod);
            step(&device, &queue, &mut full);
            let got = marks(&device, &queue, &lod);
            let frame = lod_frame(&lod, N);
            let (after, want) = (palettes(&device, &queue, &lod), palettes(&device, &queue, &full));
            for i in 0..N {
                let inst: &GpuInstance = &lod.controller().instances()[i];
                assert_eq!(
                    got[i],
                    cpu::cull::marks(&frame, inst, i as u32, &Default::default(), previous[i]),
                    "fused {fused}, frame {f}, instance {i}: marks against the mirror"
                );
                let rate = UPDATE_RATES[i % 4];
                let due = (frame.frame + cpu::cull::phase(i as u32)).is_multiple_of(rate);
                let evaluated = got[i] & MARK_EVALUATE != 0;
                assert_eq!(
                    evaluated,
                    f == 0 || due,
                    "fused {fused}, frame {f}, instance {i} at rate {rate}"
                );
                assert!(got[i] & MARK_DRAWN != 0);
                let j = joints(&lod, i);
                if evaluated {
                    assert_eq!(
                        after[j.clone()],
                        want[j],
                        "fused {fused}, frame {f}, instance {i}: evaluated"
                    );
                    evaluations[i] += u32::from(f > 0);
                } else {
                    assert_eq!(
                        after[j.clone()],
                        before[j],
                        "fused {fused}, frame {f}, instance {i}: held"
                    );
                }
            }
            if f > 0 {
                counts.push(got.iter().filter(|m| *m & MARK_EVALUATE != 0).count());
            }
            before = after;
        }
        for (i, &n) in evaluations.iter().enumerate() {
            assert_eq!(n, 16 / UPDATE_RATES[i % 4], "instance {i}: evaluations in 16 frames");
        }
        // A quarter at each rate: 100 + 50 + 25 + 12.5 a frame on average, each character on its
        // own phase (the hash of its index), so that no frame carries much more.
        let (min, max) = (*counts.iter().min().unwrap(), *counts.iter().max().unwrap());
        eprintln!("fused {fused}: evaluated per frame {min} to {max} of {N}: {counts:?}");
        assert!(min >= 170 && max <= 205, "an even share every frame: {counts:?}");
    }
}

/// A row of characters going away from the camera, their rates by projected size: the GPU's marks
/// equal the mirror's frame by frame, every rate is used, and a farther character never has a
/// higher rate than a nearer one.
#[test]
fn projected_size_picks_the_rate() {
    let (device, queue) = common::device();
    let (lib, skeleton, clips) = mannequin::library();
    const N: usize = 200;
    let mut a = animator(&device, &lib, N, true);
    for i in 0..N {
        a.controller_mut()
            .add_instance(&InstanceDesc::new(clips[1]).with_world(Mat4::from_rotation_translation(
                Quat::from_rotation_y(i as f32),
                Vec3::new(0.0, 0.0, -(i as f32)),
            )))
            .unwrap();
    }
    let radius = a.controller().instances()[0].bound_radius;
    assert_eq!(radius, lib.skeleton_radius(skeleton).unwrap());
    let camera = Camera::look_at(
        Vec3::new(0.0, 1.5, 5.0),
        Vec3::new(0.0, 1.0, -50.0),
        0.8,
        1.5,
        0.1,
        400.0,
    );
    a.controller_mut().set_cull_view(Some(camera.view_proj)).unwrap();
    let thresholds = [0.3, 0.12, 0.05];
    a.controller_mut().set_update_rates(Some(thresholds)).unwrap();
    let lod = Vec4::new(
        thresholds[0],
        thresholds[1],
        thresholds[2],
        camera.view_proj.row(1).truncate().length(),
    );
    let mut rates_seen = [0usize; 4];
    for f in 0..8 {
        let previous = marks(&device, &queue, &a);
        step(&device, &queue, &mut a);
        let got = marks(&device, &queue, &a);
        let frame = GpuFrame {
            lod,
            view_w: camera.view_proj.row(3),
            ..lod_frame(&a, N)
        };
        let mut last_rate = 1;
        for i in 0..N {
            let inst = &a.controller().instances()[i];
            assert_eq!(
                got[i],
                cpu::cull::marks(&frame, inst, i as u32, &Default::default(), previous[i]),
                "frame {f}, instance {i}"
            );
            let rate = cpu::cull::update_rate(&frame, inst);
            assert!(rate >= last_rate, "instance {i} nearer than {} has a lower rate", i - 1);
            last_rate = rate;
            if f == 0 {
                rates_seen[rate.trailing_zeros() as usize] += 1;
            }
        }
    }
    eprintln!("characters at rates 1, 2, 4, 8: {rates_seen:?}");
    assert!(rates_seen.iter().all(|&n| n > 0), "every rate is used: {rates_seen:?}");
    // The check fails with other thresholds in the mirror.
    let frame = GpuFrame {
        lod: lod * Vec4::new(2.0, 2.0, 2.0, 1.0),
        view_w: camera.view_proj.row(3),
        ..lod_frame(&a, N)
    };
    let differ = (0..N)
        .filter(|&i| {
            cpu::cull::update_rate(&frame, &a.controller().instances()[i]) != {
                let right = GpuFrame { lod, ..frame };
                cpu::cull::update_rate(&right, &a.controller().instances()[i])
            }
        })
        .count();
    assert!(differ > 10, "thresholds twice as large give other rates");
}

/// Characters at rate 8 come into view as the camera turns: each is evaluated on its first frame
/// in view, and draws the pose an animator that evaluates everyone every frame draws.
#[test]
fn a_character_coming_into_view_is_evaluated_at_once() {
    let (device, queue) = common::device();
    let (lib, _, clips) = mannequin::library();
    const N: usize = 100;
    let (mut lod, mut full) = (animator(&device, &lib, N, true), animator(&device, &lib, N, false));
    for a in [&mut lod, &mut full] {
        for i in 0..N {
            let angle = i as f32 / N as f32 * std::f32::consts::TAU;
            a.controller_mut()
                .add_instance(&InstanceDesc::new(clips[1]).with_time(i as f32 * 0.1).with_world(
                    Mat4::from_translation(Vec3::new(30.0 * angle.cos(), 0.0, 30.0 * angle.sin())),
                ))
                .unwrap();
        }
    }
    for i in 0..N {
        lod.controller_mut().set_update_rate(i, Some(8)).unwrap();
    }
    let mut entered = 0;
    for f in 0..40 {
        let angle = f as f32 * 0.05;
        let camera = Camera::look_at(Vec3::Y, Vec3::new(angle.cos(), 1.0, angle.sin()), 0.5, 1.0, 0.1, 100.0);
        lod.controller_mut().set_cull_view(Some(camera.view_proj)).unwrap();
        let previous = marks(&device, &queue, &lod);
        step(&device, &queue, &mut lod);
        step(&device, &queue, &mut full);
        let got = marks(&device, &queue, &lod);
        let (after, want) = (palettes(&device, &queue, &lod), palettes(&device, &queue, &full));
        for i in 0..N {
            if got[i] & MARK_DRAWN != 0 && previous[i] & MARK_DRAWN == 0 {
                assert!(
                    got[i] & MARK_EVALUATE != 0,
                    "frame {f}, instance {i}: in view and not evaluated"
                );
                let j = joints(&lod, i);
                assert_eq!(
                    after[j.clone()],
                    want[j],
                    "frame {f}, instance {i}: its first frame in view"
                );
                entered += usize::from(f > 0);
            }
        }
        let planes = frustum_planes(camera.view_proj);
        let drawn = (0..N)
            .filter(|&i| {
                cpu::cull::sphere_in_view(
                    &lod.controller().instances()[i].world,
                    lod.controller().instances()[i].bound_radius,
                    &planes,
                )
            })
            .count();
        assert_eq!(drawn, got.iter().filter(|m| *m & MARK_DRAWN != 0).count(), "frame {f}");
    }
    eprintln!("{entered} characters came into view");
    assert!(entered > 10, "characters come into view");
}

/// A budget steers the thresholds from the measured pass times: over the target they grow, and
/// the animator takes them; an animator that does not cull refuses them.
#[test]
fn a_budget_sets_the_rates() {
    use wgpu_anim::gpu::{DEFAULT_UPDATE_RATES, LodBudget};
    let (device, _queue) = common::device();
    let (lib, _, clips) = mannequin::library();
    let mut a = animator(&device, &lib, 4, true);
    a.controller_mut().add_instance(&InstanceDesc::new(clips[0])).unwrap();
    let mut budget = LodBudget::new(2.0, DEFAULT_UPDATE_RATES).unwrap();
    for _ in 0..10 {
        budget.apply(&mut a, &[3.0, 2.0, 1.0]).unwrap();
    }
    let set = a.controller().update_rates().unwrap();
    assert_eq!(set, budget.thresholds());
    assert!(set[0] > 4.0 * DEFAULT_UPDATE_RATES[0], "{set:?}");
    let mut plain = animator(&device, &lib, 4, false);
    assert!(budget.apply(&mut plain, &[1.0]).is_err());
}

/// Bad input is refused, naming what is wrong, and nothing changes.
#[test]
fn bad_update_rates_are_refused() {
    let (device, _queue) = common::device();
    let (lib, _, clips) = mannequin::library();
    let mut plain = animator(&device, &lib, 4, false);
    plain
        .controller_mut()
        .add_instance(&InstanceDesc::new(clips[0]))
        .unwrap();
    assert!(
        plain
            .controller_mut()
            .set_update_rates(Some([0.2, 0.1, 0.05]))
            .unwrap_err()
            .to_string()
            .contains("AnimatorDesc::culling")
    );
    assert!(
        plain
            .controller_mut()
            .set_update_rate(0, Some(2))
            .unwrap_err()
            .to_string()
            .contains("AnimatorDesc::culling")
    );
    let mut a = animator(&device, &lib, 4, true);
    let controller = a.controller_mut();
    controller.add_instance(&InstanceDesc::new(clips[0])).unwrap();
    for t in [
        [0.1, 0.2, 0.05],
        [f32::NAN, 0.1, 0.0],
        [0.2, 0.1, -0.1],
        [f32::INFINITY, 0.1, 0.0],
    ] {
        let e = controller.set_update_rates(Some(t)).unwrap_err().to_string();
        assert!(e.contains("decreasing order"), "{e}");
    }
    assert_eq!(controller.update_rates(), None, "nothing changed");
    for rate in [0, 3, 16] {
        let e = a
            .controller_mut()
            .set_update_rate(0, Some(rate))
            .unwrap_err()
            .to_string();
        assert!(e.contains("1, 2, 4 or 8") && e.contains("instance 0"), "{e}");
    }
    let controller = a.controller_mut();
    assert!(
        controller
            .set_update_rate(7, Some(2))
            .unwrap_err()
            .to_string()
            .contains("does not exist")
    );
    assert_eq!(controller.instances()[0].update_rate, 0, "nothing changed");
    controller.set_update_rate(0, Some(4)).unwrap();
    assert_eq!(controller.instances()[0].update_rate, 4);
}

/// With `AnimatorDesc::lod_interpolation`, every character at its own rate: an evaluated one
/// draws its older key (the pose an update period late; at rate 1 and on its first frame the new
/// one, bit for bit the palette of an animator that evaluates everyone) and pushes the new one
/// into its keys; a held one draws its keys blended by how far it stands between its evaluations
/// (against the mirror's `affine_lerp` and `held_fraction`, within 1e-6 of the matrices' size);
/// on both paths.
#[test]
fn interpolation_draws_between_the_last_two_evaluations() {
    let (device, queue) = common::device();
    let (lib, _, clips) = mannequin::library();
    const N: usize = 200;
    for fused in [false, true] {
        let desc = AnimatorDesc::default()
            .with_max_instances(N as u32)
            .with_culling(true)
            .with_lod_interpolation(true);
        let mut lod = Animator::new(&device, &lib, &desc).unwrap();
        let mut full = animator(&device, &lib, N, false);
        for a in [&mut lod, &mut full] {
            a.set_fused(fused).unwrap();
            for i in 0..N {
                a.controller_mut()
                    .add_instance(&InstanceDesc::new(clips[1 + i % 2]).with_time(i as f32 * 0.07))
                    .unwrap();
            }
        }
        let controller = lod.controller_mut();
        for i in 0..N {
            controller.set_update_rate(i, Some(UPDATE_RATES[i % 4])).unwrap();
        }
        let joints_used = u64::from(controller.page_state(0).unwrap().joints_used);
        let sockets = if lib.has_sockets() {
            controller.page_capacity(0) * wgpu_anim::layout::MAX_SOCKETS
        } else {
            0
        };
        let key_base = u64::from(controller.page_max_joints(0) + sockets);
        let keys = |a: &Animator| -> Vec<Affine> {
            a.read_page_buffer(&device, &queue, 0, Resource::Palettes, key_base, 2 * joints_used)
                .unwrap()
        };
        let (mut worst, mut interpolated) = (0.0f32, 0);
        let mut before = keys(&lod);
        for f in 0..12 {
            step(&device, &queue, &mut lod);
            step(&device, &queue, &mut full);
            let got = marks(&device, &queue, &lod);
            let (drawn, want, after) = (
                palettes(&device, &queue, &lod),
                palettes(&device, &queue, &full),
                keys(&lod),
            );
            let frame = lod_frame(&lod, N);
            for i in 0..N {
                let inst = &lod.controller().instances()[i];
                let fresh = got[i] & wgpu_anim::layout::MARK_ENTERED != 0 || UPDATE_RATES[i % 4] == 1;
                for j in joints(&lod, i) {
                    let (older, newer) = (&after[2 * j], &after[2 * j + 1]);
                    if got[i] & MARK_EVALUATE != 0 {
                        let shown = if fresh { &want[j] } else { &before[2 * j + 1] };
                        assert_eq!(
                            &drawn[j], shown,
                            "fused {fused}, frame {f}, instance {i}, joint {j}: drawn"
                        );
                        assert_eq!(
                            (older, newer),
                            (shown, &want[j]),
                            "fused {fused}, frame {f}, instance {i}: keys"
                        );
                    } else {
                        let s = cpu::cull::held_fraction(&frame, inst, i as u32);
                        assert!(s > 0.0 && s < 1.0, "a held character stands between its keys");
                        let expected = cpu::affine_lerp(older, newer, s);
                        let scale = 1.0 + expected.x.abs().max_element().max(expected.y.abs().max_element());
                        let e = drawn[j].max_abs_diff(&expected) / scale;
                        worst = worst.max(e);
                        assert!(e <= 1e-6, "fused {fused}, frame {f}, instance {i}, joint {j}: {e:e}");
                        assert_eq!((older, newer), (&before[2 * j], &before[2 * j + 1]), "held keys kept");
                        interpolated += usize::from(drawn[j] != *older && drawn[j] != *newer);
                    }
                }
            }
            before = after;
        }
        eprintln!(
            "fused {fused}: held joints within {worst:e} of the mirror's blend; {interpolated} strictly between their keys"
        );
        assert!(interpolated > 1000, "held characters are drawn between their keys");
    }
}

/// The renderer's LOD tint draws each character in the colour of the rate the GPU evaluates it
/// at: the same picture as an animator whose characters' own tints are those colours, from the
/// rates given, to within a unit of rounding; and another picture with the LOD tint off.
#[test]
fn the_lod_tint_shows_each_rate() {
    let (device, queue) = common::device();
    let (lib, skeleton, clips) = mannequin::library();
    let mesh = mannequin::mesh(&lib.skeletons()[skeleton.index() as usize]);
    // The built-in renderer's colours of rates 1, 2, 4 and 8 (shaders/skin.wgsl `tint_of`).
    const TINTS: [[u8; 4]; 4] = [
        [80, 170, 240, 255],
        [90, 200, 90, 255],
        [235, 200, 50, 255],
        [215, 60, 45, 255],
    ];
    const SIDE: usize = 6;
    let (width, height) = (240, 160);
    let camera = Camera::look_at(
        Vec3::new(0.0, 4.0, 6.0),
        Vec3::new(0.0, 0.5, -3.0),
        0.9,
        1.5,
        0.1,
        100.0,
    );
    let (color, depth) = (
        wgpu_anim::gpu::OffscreenTarget::COLOR_FORMAT,
        Some(wgpu_anim::gpu::OffscreenTarget::DEPTH_FORMAT),
    );
    let target = wgpu_anim::gpu::OffscreenTarget::new(&device, width, height).unwrap();
    // Two crowds alike but for their tints: white, and each character its rate's colour.
    let crowds = [None, Some(TINTS)].map(|tints| {
        let mut a = animator(&device, &lib, SIDE * SIDE, true);
        for i in 0..SIDE * SIDE {
            let at = Vec3::new((i % SIDE) as f32 * 1.2 - 3.0, 0.0, -((i / SIDE) as f32) * 1.2);
            a.controller_mut()
                .add_instance(
                    &InstanceDesc::new(clips[1])
                        .with_time(i as f32 * 0.1)
                        .with_world(Mat4::from_rotation_translation(Quat::from_rotation_y(i as f32), at))
                        .with_tint(tints.map_or([255; 4], |t| t[i % 4])),
                )
                .unwrap();
            a.controller_mut()
                .set_update_rate(i, Some(UPDATE_RATES[i % 4]))
                .unwrap();
        }
        a.controller_mut().set_cull_view(Some(camera.view_proj)).unwrap();
        for _ in 0..3 {
            step(&device, &queue, &mut a);
        }
        let renderer = wgpu_anim::SkinnedRenderer::new(&device, &a, skeleton, &mesh, color, depth, 1).unwrap();
        renderer.set_camera(&queue, &camera);
        (a, renderer)
    });
    let draw = |(a, renderer): &(Animator, wgpu_anim::SkinnedRenderer), lod_tint: bool| {
        renderer.set_lod_tint(&queue, lod_tint);
        let mut encoder = device.create_command_encoder(&Default::default());
        renderer.encode(&mut encoder, a);
        {
            let (mut pass, _views) = target.begin_pass(&mut encoder, wgpu::Color::BLACK);
            renderer.draw_visible(&mut pass, a).unwrap();
        }
        queue.submit([encoder.finish()]);
        target.read_rgba(&device, &queue).unwrap()
    };
    let by_rate = draw(&crowds[0], true);
    let by_tint = draw(&crowds[1], false);
    let drawn = by_rate.chunks(4).filter(|p| p[..3] != [0, 0, 0]).count();
    assert!(
        drawn > width as usize * height as usize / 20,
        "the characters fill the picture: {drawn} pixels"
    );
    let worst = by_rate.iter().zip(&by_tint).map(|(x, y)| x.abs_diff(*y)).max().unwrap();
    assert!(worst <= 1, "the LOD tint against the rates' tints: {worst} apart");
    // The comparison fails on another picture: the white crowd without the LOD tint.
    let white = draw(&crowds[0], false);
    let differ = white.chunks(4).zip(by_rate.chunks(4)).filter(|(x, y)| x != y).count();
    assert!(
        differ > drawn / 2,
        "{differ} of {drawn} pixels differ without the LOD tint"
    );
}
