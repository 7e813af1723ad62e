//! Root motion: extraction against the f64 oracle, the clock stage's displacement and world
//! against the CPU mirror for random crowds (trees, cross-fades, layers, reverse rates, loops,
//! long frames) on both paths, whole loops equal to the extracted track's total, the world kept
//! on the GPU whatever the CPU uploads, `set_world` as a teleport.

mod common;

use glam::{DQuat, DVec3, Mat4, Quat, Vec2, Vec3};
use rand::Rng;
use wgpu_anim::cpu::{EventLog, PageBuffers};
use wgpu_anim::gpu::{LoopMode, Transition};
use wgpu_anim::layout::{GpuFrame, GpuOutput};
use wgpu_anim::offline::root_motion::{RootMotion, RootMotionMode};
use wgpu_anim::{Affine, Animator, AnimatorDesc, InstanceDesc, mannequin};

/// Largest difference of two worlds' elements, relative to 1 + the translation's size.
fn world_error(a: &Affine, b: &Affine) -> f32 {
    let scale = 1.0 + b.x.w.abs().max(b.y.w.abs()).max(b.z.w.abs());
    a.max_abs_diff(b) / scale
}

/// A library laid out as `common::random_library`'s for one 37-joint skeleton (its clips, trees and
/// mask), each clip added with root motion (planar or full, alternately, from the first joint or
/// another).
fn random_root_library(seed: u64) -> wgpu_anim::AnimationLibrary {
    common::random_library_one_skeleton(seed, 37, |b, s, skeleton, clip, k, _| {
        let motion = RootMotion {
            joint: (k % 3 == 2).then(|| skeleton.joint_names()[1].clone()),
            mode: if k % 2 == 0 {
                RootMotionMode::Planar
            } else {
                RootMotionMode::Full
            },
            ..Default::default()
        };
        b.add_clip_with_root_motion(s, &clip, &motion).unwrap()
    })
}

/// Random crowds on both paths, frame by frame from the GPU's own state: the roots and the
/// worlds the clock stage writes equal the CPU mirror's (`cpu::clock` with the page's outputs)
/// within 2e-5 of the world's size per frame (f32 rounding of the sampled tracks and the blended
/// quaternion; FMA), and within 5e-4 for frames of several loops of these random clips (a loop's
/// displacement raised to a power by repeated squaring compounds the rounding).
#[test]
fn gpu_root_motion_equals_the_mirror_for_random_crowds() {
    let (device, queue) = common::device();
    let lib = random_root_library(5);
    let clips = lib.clips().len() as u32;
    let mut r = common::rng(9);
    let mut worst = [0.0f32; 2];
    for fused in [false, true] {
        let mut a = Animator::new(&device, &lib, &AnimatorDesc::default().with_max_instances(200)).unwrap();
        a.set_fused(fused).unwrap();
        for i in 0..200 {
            let mut desc = common::random_state(&mut r, &lib, 0);
            desc.rate = [1.0, -1.0, 0.7, 2.5][r.gen_range(0..4)];
            desc.loop_mode = [LoopMode::Forever, LoopMode::Once, LoopMode::Repeat(2)][r.gen_range(0..3)];
            desc.world = Mat4::from_rotation_translation(
                Quat::from_rotation_y(r.gen_range(-3.0..3.0)),
                Vec3::new(r.gen_range(-50.0..50.0), 0.0, r.gen_range(-50.0..50.0)),
            );
            a.controller_mut().add_instance(&desc).unwrap();
            // Most move by root motion; some stand where the CPU puts them.
            if i % 7 != 3 {
                a.controller_mut().set_root_motion(i, true).unwrap();
            }
        }
        common::random_layers(&mut a, &mut r);
        for f in 0..24 {
            for _ in 0..10 {
                let i = r.gen_range(0..a.controller().instance_count());
                let rate = r.gen_range(-2.0..2.0);
                let desc = InstanceDesc::new(lib.clip_at(r.gen_range(0..clips)).unwrap()).with_rate(rate);
                let t = [None, Some(Transition::linear(0.3))][r.gen_range(0..2)];
                a.controller_mut().play(i, &desc, t).unwrap();
            }
            let dt = if f % 8 == 7 { 3.1 } else { r.gen_range(0.0..0.05) };
            a.prepare(&queue, dt);
            let mut roots = a.read_outputs_page(&device, &queue, 0).unwrap();
            let before = roots.clone();
            let (mut clocks, _) = a.read_back(&device, &queue).unwrap();
            let mut encoder = device.create_command_encoder(&Default::default());
            a.encode(&mut encoder).unwrap();
            queue.submit([encoder.finish()]);
            let gpu = a.read_outputs_page(&device, &queue, 0).unwrap();
            let gpu_instances: Vec<wgpu_anim::layout::GpuInstance> = wgpu_anim::gpu::read_buffer(
                &device,
                &queue,
                a.instance_buffer(),
                0,
                a.controller().instance_count() as u64,
            )
            .unwrap();
            let frame = GpuFrame {
                dt,
                instance_count: a.controller().instance_count() as u32,
                snapshot_offset: a.max_joints(),
                ..Default::default()
            };
            let mut instances = a.controller().instances().to_vec();
            let mut lists = vec![Default::default(); instances.len()];
            let mut log = EventLog::default();
            let mut page = PageBuffers::new(&frame, &mut instances)
                .layer_defs(a.controller().layer_defs())
                .clocks(&mut clocks)
                .blend_lists(&mut lists)
                .outputs(&mut roots)
                .events(&mut log);
            wgpu_anim::cpu::clock(a.controller().library(), &mut page).unwrap();
            for i in 0..instances.len() {
                if !a.controller().root_motion(i) {
                    assert_eq!(
                        gpu_instances[i].world,
                        a.controller().instances()[i].world,
                        "character {i} stays put"
                    );
                    continue;
                }
                let (g, w) = (&gpu[i], &roots[i]);
                let e = world_error(&g.world, &w.world)
                    .max(
                        (g.delta_translation - w.delta_translation).abs().max_element()
                            / (1.0 + w.delta_translation.length()),
                    )
                    .max((g.delta_rotation - w.delta_rotation).abs().max_element());
                let long = f % 8 == 7;
                worst[usize::from(long)] = worst[usize::from(long)].max(e);
                let tolerance = if long { 5e-4 } else { 2e-5 };
                assert!(e < tolerance, "frame {f} (fused {fused}) character {i}: {g:?} vs {w:?}");
                assert_eq!(gpu_instances[i].world, g.world, "the instance carries the root's world");
                assert_eq!(g.world_seq, a.controller().instances()[i].world_seq);
            }
            // The comparison sees a frame's motion: the roots before the frame differ from both.
            if f > 0 && dt > 0.01 {
                let moved = (0..instances.len())
                    .filter(|&i| a.controller().root_motion(i) && world_error(&gpu[i].world, &before[i].world) > 2e-5)
                    .count();
                assert!(moved > instances.len() / 5, "frame {f}: only {moved} moved");
            }
        }
    }
    println!("worst error {:e}, in frames of several loops {:e}", worst[0], worst[1]);
}

/// The walk of the mannequin with root motion, played by characters for one loop in frames of
/// every kind — 30 equal frames, one frame of the whole loop, uneven frames, backward — and for
/// 2.5 loops in one frame: each ends displaced by the f64 oracle's `G(T)` (raised to the loops
/// played), within 1e-4 of the character's height.
#[test]
fn whole_loops_move_by_the_extracted_total() {
    let (device, queue) = common::device();
    let skeleton = mannequin::skeleton();
    let (lib, _, ids) = mannequin::library_with_root_motion(skeleton.clone());
    let walk = ids[1];
    let clip = &mannequin::clips_with_root_motion(&skeleton)[1];
    let motion = RootMotion {
        joint: Some("root".into()),
        ..Default::default()
    };
    let duration = f64::from(clip.duration);
    let (loop_t, loop_q) = wgpu_anim::offline::root_motion::root_motion_at(&skeleton, clip, &motion, duration).unwrap();
    assert!(loop_t.length() > 1.0, "a walk's loop covers ground: {loop_t}");
    let height = 1.8;
    let plays: Vec<(f32, Vec<f32>, i32)> = vec![
        (1.0, vec![clip.duration / 30.0; 30], 1),
        (1.0, vec![clip.duration], 1),
        (1.0, vec![0.13, 0.4, 0.001, clip.duration - 0.531], 1),
        (-1.0, vec![clip.duration / 7.0; 7], -1),
        (2.5, vec![clip.duration], 2),
    ];
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    for (k, (rate, _, _)) in plays.iter().enumerate() {
        a.controller_mut()
            .add_instance(
                &InstanceDesc::new(walk)
                    .with_rate(*rate)
                    .with_world(Mat4::from_translation(Vec3::new(k as f32 * 3.0, 0.0, 0.0))),
            )
            .unwrap();
        a.controller_mut().set_root_motion(k, true).unwrap();
    }
    // Every character plays its frames; the others pause meanwhile.
    for (k, (rate, dts, _)) in plays.iter().enumerate() {
        for (j, _) in plays.iter().enumerate() {
            a.controller_mut()
                .set_rate(j, if j == k { *rate } else { 0.0 })
                .unwrap();
        }
        for &dt in dts {
            a.prepare(&queue, dt);
            let mut encoder = device.create_command_encoder(&Default::default());
            a.encode(&mut encoder).unwrap();
            queue.submit([encoder.finish()]);
        }
    }
    let roots: Vec<GpuOutput> = a.read_outputs_page(&device, &queue, 0).unwrap();
    for (k, (rate, _, loops)) in plays.iter().enumerate() {
        // k loops of G(T), plus for rate 2.5 half a loop more.
        let mut t = DVec3::ZERO;
        let mut q = DQuat::IDENTITY;
        let step = |t: &mut DVec3, q: &mut DQuat, dt: DVec3, dq: DQuat| {
            *t += *q * dt;
            *q = (*q * dq).normalize();
        };
        for _ in 0..loops.unsigned_abs() {
            if *loops > 0 {
                step(&mut t, &mut q, loop_t, loop_q);
            } else {
                let inv = loop_q.inverse();
                step(&mut t, &mut q, -(inv * loop_t), inv);
            }
        }
        if *rate == 2.5 {
            let (ht, hq) =
                wgpu_anim::offline::root_motion::root_motion_at(&skeleton, clip, &motion, duration * 0.5).unwrap();
            step(&mut t, &mut q, ht, hq);
        }
        let want = Vec3::new(k as f32 * 3.0, 0.0, 0.0) + t.as_vec3();
        let got = Vec3::new(roots[k].world.x.w, roots[k].world.y.w, roots[k].world.z.w);
        let e = (got - want).length();
        assert!(e < 1e-4 * height, "play {k}: at {got}, want {want} ({e} m off)");
    }
}

/// A character with root motion keeps its GPU world whatever the CPU uploads (its rate set every
/// frame, a new clip played); `set_world` teleports it and root motion carries on from there;
/// root motion off returns it to the CPU's world.
#[test]
fn the_world_lives_on_the_gpu_and_set_world_teleports() {
    let (device, queue) = common::device();
    let (lib, _, ids) = mannequin::library_with_root_motion(mannequin::skeleton());
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    a.controller_mut().add_instance(&InstanceDesc::new(ids[1])).unwrap();
    a.controller_mut().set_root_motion(0, true).unwrap();
    let frame = |a: &mut Animator| {
        a.prepare(&queue, 1.0 / 30.0);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        a.read_outputs_page(&device, &queue, 0).unwrap()[0].world
    };
    let z = |w: &Affine| w.z.w;
    let mut last = frame(&mut a);
    for f in 0..20 {
        a.controller_mut().set_rate(0, 1.0).unwrap(); // an upload of the instance every frame
        if f == 10 {
            a.controller_mut()
                .play(0, &InstanceDesc::new(ids[2]), Some(Transition::linear(0.2)))
                .unwrap();
        }
        let w = frame(&mut a);
        assert!(
            z(&w) > z(&last),
            "frame {f}: walks forward ({} after {})",
            z(&w),
            z(&last)
        );
        last = w;
    }
    assert!(z(&last) > 1.0, "{}", z(&last));
    a.controller_mut()
        .set_world(0, Mat4::from_translation(Vec3::new(100.0, 0.0, -5.0)))
        .unwrap();
    let w = frame(&mut a);
    assert!(
        (w.x.w - 100.0).abs() < 1e-4 && w.z.w > -5.0 && w.z.w < -4.8,
        "teleported, then one step: {w:?}"
    );
    let w2 = frame(&mut a);
    assert!(w2.z.w > w.z.w, "and on from there");
    a.controller_mut().set_root_motion(0, false).unwrap();
    frame(&mut a);
    let gpu: Vec<wgpu_anim::layout::GpuInstance> =
        wgpu_anim::gpu::read_buffer(&device, &queue, a.instance_buffer(), 0, 1).unwrap();
    assert_eq!(gpu[0].world.x.w, 100.0, "off: the CPU's world again");
    assert_eq!(gpu[0].world.z.w, -5.0);
}

/// How fast planted feet move in the world: for each of 8 mannequins playing the locomotion blend
/// space at `params` (character-space velocity, m/s) from different phases for 3 s at 60 frames a
/// second, moved by root motion or (`root_motion` false) by the CPU at the parameter's velocity
/// as the crowd demo did before root motion, the sole's world speed in the flat-foot part of
/// each stance — from 4 to 10 frames after the foot's foot-down event — averaged over every
/// stance; and the characters' mean speed.
fn planted_foot_speed(device: &wgpu::Device, queue: &wgpu::Queue, root_motion: bool, params: [f32; 2]) -> (f32, f32) {
    let mut skeleton = mannequin::skeleton();
    let soles = mannequin::add_soles(&mut skeleton).unwrap();
    let (lib, _, _) = mannequin::library_with_root_motion(skeleton);
    let tree = lib.blend().tree_id(mannequin::LOCOMOTION).unwrap();
    let events = [mannequin::FOOT_DOWN_L, mannequin::FOOT_DOWN_R].map(|e| lib.event_id(e).unwrap());
    const N: usize = 8;
    const DT: f32 = 1.0 / 60.0;
    let mut a = Animator::new(device, &lib, &AnimatorDesc::default()).unwrap();
    a.watch_events(device, 256).unwrap();
    for i in 0..N {
        a.controller_mut()
            .add_instance(
                &InstanceDesc::tree(tree, [params[0], params[1], 0.0, 0.0])
                    .with_time(i as f32 / N as f32)
                    .with_world(Mat4::from_translation(Vec3::new(i as f32 * 2.0, 0.0, 0.0))),
            )
            .unwrap();
        a.controller_mut().set_root_motion(i, root_motion).unwrap();
    }
    let frames = 180;
    // soles[frame][character][side], and the foot-down frames of each character and side.
    let mut at: Vec<Vec<[Vec3; 2]>> = Vec::new();
    let mut downs: Vec<(usize, usize, usize)> = Vec::new();
    let mut start = [Vec3::ZERO; N];
    for f in 0..frames {
        if !root_motion {
            for i in 0..N {
                let p = Vec3::new(
                    i as f32 * 2.0 + params[0] * DT * (f + 1) as f32,
                    0.0,
                    params[1] * DT * (f + 1) as f32,
                );
                a.controller_mut().set_world(i, Mat4::from_translation(p)).unwrap();
            }
        }
        a.prepare(queue, DT);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let sockets = a.read_sockets_page(device, queue, 0).unwrap();
        let per: Vec<[Vec3; 2]> = (0..N)
            .map(|i| {
                soles.map(|s| {
                    let m = sockets[i * wgpu_anim::layout::MAX_SOCKETS as usize + s];
                    Vec3::new(m.x.w, m.y.w, m.z.w)
                })
            })
            .collect();
        if f == 0 {
            for i in 0..N {
                start[i] = (per[i][0] + per[i][1]) * 0.5;
            }
        }
        at.push(per);
        let (records, _) = a.read_events(device, queue).unwrap();
        for r in records {
            if let Some(side) = events.iter().position(|&e| e == r.event) {
                downs.push((f, r.character as usize, side));
            }
        }
    }
    let mut speeds = Vec::new();
    for &(f, i, side) in &downs {
        if f + 10 >= frames {
            continue;
        }
        let (a, b) = (at[f + 4][i][side], at[f + 10][i][side]);
        speeds.push(Vec2::new(b.x - a.x, b.z - a.z).length() / (6.0 * DT));
    }
    assert!(speeds.len() >= N * 4, "{} stances", speeds.len());
    let planted = speeds.iter().sum::<f32>() / speeds.len() as f32;
    let travelled: f32 = (0..N)
        .map(|i| {
            let end = (at[frames - 1][i][0] + at[frames - 1][i][1]) * 0.5;
            Vec2::new(end.x - start[i].x, end.z - start[i].z).length()
        })
        .sum::<f32>()
        / N as f32;
    (planted, travelled / ((frames - 1) as f32 * DT))
}

/// Root motion keeps planted feet planted: walking (at the walk's own speed, 1.4 m/s, and slower,
/// where the blend space mixes in the idle), each stance's planted sole moves in the world at
/// under 1 % of the walking speed; moved by the CPU at the blend parameter's velocity, as before,
/// the slower walk's feet slide ten times as fast or more (the blend's clips step at their own
/// speed, not the parameter's). A walk blended with the run is measured and reported too: there
/// the blend itself slides (the walk's and the run's stances do not line up), either way.
#[test]
fn root_motion_keeps_planted_feet_planted() {
    let (device, queue) = common::device();
    const WALK: f32 = 1.4;
    for params in [[0.0, WALK], [0.0, 1.1], [0.0, 2.2]] {
        let (root, speed) = planted_foot_speed(&device, &queue, true, params);
        let (velocity_driven, _) = planted_foot_speed(&device, &queue, false, params);
        println!(
            "locomotion at {params:?}: root motion {speed:.3} m/s, planted feet {root:.4} m/s \
             ({:.2} % of its speed); moved at the parameter's velocity, planted feet {velocity_driven:.4} m/s",
            100.0 * root / speed,
        );
        if params[1] < 2.0 {
            assert!(
                root < 0.01 * WALK,
                "{params:?}: planted feet at {root} m/s walking at {speed}"
            );
        }
        if params[1] < 2.0 && params[1] != WALK {
            assert!(velocity_driven > 10.0 * root, "{params:?}: {velocity_driven} vs {root}");
        }
    }
}

/// The GPU's worlds read back two ways: `watch_outputs` (characters on several pages, out of
/// order) equals a waiting read of the outputs section every frame; and an animator rebuilt from
/// its checkpoints moves its characters on from the same worlds, bit for bit.
#[test]
fn watched_outputs_and_a_rebuild_keep_the_gpus_worlds() {
    let (device, queue) = common::device();
    let (lib, _, ids) = mannequin::library_with_root_motion(mannequin::skeleton());
    let desc = AnimatorDesc::default()
        .with_max_instances(12)
        .with_page_instances(Some(4));
    let mut a = Animator::new(&device, &lib, &desc).unwrap();
    for i in 0..10 {
        a.controller_mut()
            .add_instance(
                &InstanceDesc::new(ids[1 + i % 2])
                    .with_time(i as f32 * 0.1)
                    .with_world(Mat4::from_translation(Vec3::new(i as f32, 0.0, 0.0))),
            )
            .unwrap();
        a.controller_mut().set_root_motion(i, true).unwrap();
    }
    let watched = [7, 1, 2, 3, 9, 0];
    a.watch_outputs(&device, &watched).unwrap();
    a.set_recovery(&device, std::num::NonZeroU32::new(3));
    let frame = |a: &mut Animator| {
        a.prepare(&queue, 1.0 / 30.0);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
    };
    let outputs = |a: &Animator| -> Vec<GpuOutput> {
        (0..3)
            .flat_map(|page| a.read_outputs_page(&device, &queue, page).unwrap())
            .collect()
    };
    // Frame f's readback arrives at frame f + 1's prepare.
    let mut truth: Vec<Vec<GpuOutput>> = vec![Vec::new()];
    let mut arrived = Vec::new();
    for _ in 0..8 {
        frame(&mut a);
        arrived.extend(a.take_readbacks());
        let all = outputs(&a);
        truth.push(watched.iter().map(|&i| all[i]).collect());
    }
    let frames: Vec<u64> = arrived.iter().map(|r| r.frame).collect();
    assert_eq!(frames, (1..8).collect::<Vec<u64>>());
    for r in &arrived {
        assert_eq!(r.outputs, truth[r.frame as usize], "frame {}", r.frame);
        assert_ne!(r.outputs, truth[r.frame as usize - 1], "frame {} moved on", r.frame);
    }
    assert!(a.recovery_frames().is_some(), "a checkpoint is back");
    let mut b = a.rebuild(&device, &queue).unwrap();
    for f in 0..3 {
        frame(&mut a);
        frame(&mut b);
        let (wa, wb) = (outputs(&a), outputs(&b));
        for (i, (x, y)) in wa.iter().zip(&wb).enumerate().filter(|(i, _)| *i < 10) {
            assert_eq!(x.world, y.world, "frame {f} after the rebuild, character {i}");
        }
    }
}
