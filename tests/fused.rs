//! The fused path (the clock pass, then the other stages in one dispatch, the hierarchy walked a
//! level at a time) computes what the staged path computes: the same random crowds (clips, blend
//! trees, layers of every mode, cross-fades and interrupted cross-fades) on a fused and a staged
//! animator, frame by frame; clocks must be equal, snapshot poses and palettes agree within 1e-5
//! (and are equal, bit for bit, between the hierarchy's walks and the threads per character).
//! (The staged path is checked against the CPU mirror stage by stage in `tests/gpu_stages.rs`.)

mod common;

use common::{affine_error, compare, pose_error, random_state, rng};
use rand::Rng;
use wgpu_anim::cpu::PageBuffers;
use wgpu_anim::gpu::Transition;
use wgpu_anim::gpu::{CharacterThreads, HierarchyWalk};
use wgpu_anim::layout::KEEP_POSE;
use wgpu_anim::{Animator, AnimatorDesc};

fn crowd(device: &wgpu::Device, lib: &wgpu_anim::AnimationLibrary, fused: bool, n: usize) -> Animator {
    crowd_walking(device, lib, fused, n, (HierarchyWalk::Auto, CharacterThreads::Auto))
}

fn crowd_walking(
    device: &wgpu::Device,
    lib: &wgpu_anim::AnimationLibrary,
    fused: bool,
    n: usize,
    (walk, threads): (HierarchyWalk, CharacterThreads),
) -> Animator {
    let mut a = Animator::new(
        device,
        lib,
        &AnimatorDesc::default()
            .with_max_instances(n as u32)
            .with_hierarchy_walk(walk)
            .with_character_threads(threads),
    )
    .unwrap();
    assert!(a.fused_available(), "lavapipe offers the limits the fused path needs");
    a.set_fused(fused).unwrap();
    let mut r = rng(31);
    for _ in 0..n {
        let skeleton = r.gen_range(0..2);
        let desc = {
            // The fields drawn before the state, as they were.
            let (time, rate) = (r.gen_range(0.0..2.0), r.gen_range(-1.5..1.5));
            random_state(&mut r, lib, skeleton).with_time(time).with_rate(rate)
        };
        a.controller_mut().add_instance(&desc).unwrap();
    }
    common::random_layers(&mut a, &mut r);
    a
}

fn step(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator, dt: f32) {
    a.prepare(queue, dt);
    let mut e = device.create_command_encoder(&Default::default());
    a.encode(&mut e).unwrap();
    queue.submit([e.finish()]);
}

#[test]
fn fused_matches_staged_frame_by_frame() {
    let (device, queue) = common::device();
    let (lib, _) = common::random_library_of(8, &[1, 40]);
    let n = 1500;
    // Both walks of the hierarchy and the three thread counts per character (a thread per
    // character walks its own), each against the staged path; the staged path with the three.
    let (wide, narrow, one) = (CharacterThreads::Wide, CharacterThreads::Narrow, CharacterThreads::One);
    let [mut staged, mut staged_narrow, mut staged_one] =
        [wide, narrow, one].map(|t| crowd_walking(&device, &lib, false, n, (HierarchyWalk::Auto, t)));
    let chosen = [
        (HierarchyWalk::Levels, wide),
        (HierarchyWalk::OneThread, narrow),
        (HierarchyWalk::OneThread, one),
    ];
    let mut walks = chosen.map(|w| crowd_walking(&device, &lib, true, n, w));
    assert_eq!(
        walks
            .each_ref()
            .map(|a| (a.hierarchy_walk(), a.fused_character_threads().unwrap())),
        chosen
    );
    for fused in &walks {
        assert_eq!((staged.dispatches_per_frame(), fused.dispatches_per_frame()), (4, 2));
    }
    // Auto: by levels and a workgroup per character on a GPU, one thread walking and a SIMD
    // group per character on a CPU adapter.
    let cpu = device.adapter_info().device_type == wgpu::DeviceType::Cpu;
    let auto = crowd(&device, &lib, true, 1);
    assert_eq!(
        (auto.hierarchy_walk(), auto.character_threads()),
        if cpu {
            (HierarchyWalk::OneThread, CharacterThreads::One)
        } else {
            (HierarchyWalk::Levels, wide)
        }
    );
    let mut r = rng(5);
    let dts = [0.0, 0.1, 0.05, 0.2, 0.016, 0.3];
    let mut worst = 0.0f32;
    let mut kept = 0;
    for (f, dt) in dts.into_iter().enumerate() {
        if f == 2 || f == 3 {
            // The same cross-fades on both (frame 3 interrupts some of frame 2's: snapshots).
            for i in 0..n {
                if r.gen_range(0..3) == 0 {
                    let skel = staged.controller().instance(i).unwrap().skeleton;
                    let desc = random_state(&mut r, &lib, skel);
                    let t = Transition::linear(r.gen_range(0.2..0.8));
                    staged.controller_mut().play(i, &desc, Some(t)).unwrap();
                    staged_narrow.controller_mut().play(i, &desc, Some(t)).unwrap();
                    staged_one.controller_mut().play(i, &desc, Some(t)).unwrap();
                    for fused in &mut walks {
                        fused.controller_mut().play(i, &desc, Some(t)).unwrap();
                    }
                }
            }
        }
        step(&device, &queue, &mut staged, dt);
        let (sc, sp) = staged.read_back(&device, &queue).unwrap();
        let keeping = staged
            .controller()
            .instances()
            .iter()
            .filter(|i| i.flags & KEEP_POSE != 0)
            .count();
        kept += keeping;
        let snapshots = staged.read_snapshots(&device, &queue).unwrap();
        // The staged passes with a SIMD group or a thread per character: the same results, bit
        // for bit.
        for other in [&mut staged_narrow, &mut staged_one] {
            step(&device, &queue, other, dt);
            let (nc, np) = other.read_back(&device, &queue).unwrap();
            let threads = other.character_threads();
            assert_eq!((&sc, &sp.palette), (&nc, &np.palette), "frame {f}: {threads:?} differs");
            assert_eq!(snapshots, other.read_snapshots(&device, &queue).unwrap(), "{threads:?}");
        }
        let mut palettes = Vec::new();
        for fused in &mut walks {
            step(&device, &queue, fused, dt);
            let (fc, fp) = fused.read_back(&device, &queue).unwrap();
            let walk = (fused.hierarchy_walk(), fused.character_threads());
            assert_eq!(sc, fc, "frame {f}, {walk:?}: clocks differ");
            compare(
                "snapshot",
                &fused.read_snapshots(&device, &queue).unwrap(),
                &snapshots,
                1e-5,
                pose_error,
            )
            .unwrap_or_else(|e| panic!("frame {f}, {walk:?}: {e}"));
            worst = worst.max(
                compare("palette", &fp.palette, &sp.palette, 1e-5, affine_error)
                    .unwrap_or_else(|e| panic!("frame {f}, {walk:?}: {e}")),
            );
            palettes.push(fp.palette);
        }
        // The walks compute the same products: the same matrices, bit for bit.
        assert_eq!(palettes[0], palettes[1], "frame {f}: the walks differ");
        assert_eq!(palettes[0], palettes[2], "frame {f}: a thread per character differs");
    }
    assert!(
        kept > 50,
        "{kept} instances kept their pose for an interrupting cross-fade"
    );
    eprintln!(
        "fused vs staged over {} frames: worst palette error {worst:e}",
        dts.len()
    );
}

#[test]
fn fused_is_refused_where_it_cannot_run() {
    let (device, queue) = common::device();
    // A skeleton beyond the fused path's 128 joints keeps the staged path only.
    let (lib, _) = common::random_library_of(2, &[1, 130]);
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    assert!(!a.fused_available());
    assert!(a.set_fused(true).unwrap_err().to_string().contains("128 joints"));
    assert_eq!(a.dispatches_per_page(), 4);
    // Nor can the fused pass be recorded alone; the staged passes can (once a frame is
    // prepared), the skinning pass never.
    use wgpu_anim::shaders::Stage;
    a.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    assert!(a.encode_stage(&mut encoder, Stage::Fused).is_err());
    assert!(a.encode_stage(&mut encoder, Stage::Skin).is_err());
    for stage in Stage::COMPUTE {
        a.encode_stage(&mut encoder, stage).unwrap();
    }
}

#[test]
fn the_fused_mirror_matches_the_fused_gpu_path() {
    // cpu::clock then cpu::fused (the same steps as the clock pass and shaders/fused.wgsl, on
    // the same workgroup memory) fed the GPU's clocks and snapshots from before a frame, against
    // the GPU's clocks and palettes after it. Cross-fades run, some interrupting others
    // (snapshots kept and read).
    let (device, queue) = common::device();
    let (lib, _) = common::random_library_of(9, &[1, 40]);
    let n = 800;
    // By levels, as the mirror walks (on a CPU adapter the default is one thread).
    let mut a = crowd_walking(&device, &lib, true, n, (HierarchyWalk::Levels, CharacterThreads::Auto));
    let mut r = rng(6);
    for (f, dt) in [0.0, 0.1, 0.05, 0.2].into_iter().enumerate() {
        if f >= 2 {
            for i in 0..n {
                if r.gen_range(0..3) == 0 {
                    let skel = a.controller().instance(i).unwrap().skeleton;
                    let desc = random_state(&mut r, &lib, skel);
                    a.controller_mut()
                        .play(i, &desc, Some(Transition::linear(r.gen_range(0.2..0.8))))
                        .unwrap();
                }
            }
        }
        step(&device, &queue, &mut a, dt);
    }
    let (mut clocks, _) = a.read_back(&device, &queue).unwrap();
    let max = a.max_joints() as usize;
    // The pose history: the snapshots, then room for velocities.
    let mut history = vec![wgpu_anim::layout::LocalPose::default(); 2 * max];
    let snapshots = a.read_snapshots(&device, &queue).unwrap();
    history[..snapshots.len()].copy_from_slice(&snapshots);
    let keeping = a
        .controller()
        .instances()
        .iter()
        .filter(|i| i.flags & KEEP_POSE != 0)
        .count();
    let dt = 0.016;
    step(&device, &queue, &mut a, dt);
    let (gpu_clocks, gpu) = a.read_back(&device, &queue).unwrap();
    let frame = wgpu_anim::layout::GpuFrame {
        dt,
        instance_count: n as u32,
        snapshot_offset: max as u32,
        ..Default::default()
    };
    let mut palettes = vec![wgpu_anim::Affine::IDENTITY; gpu.palette.len()];
    let mut instances = a.controller().instances().to_vec();
    let mut lists = vec![wgpu_anim::layout::BlendList::default(); n];
    let mut page = PageBuffers::new(&frame, &mut instances)
        .layer_defs(a.controller().layer_defs())
        .clocks(&mut clocks)
        .blend_lists(&mut lists)
        .pose_history(&mut history)
        .palettes(&mut palettes);
    wgpu_anim::cpu::clock(a.controller().library(), &mut page).unwrap();
    wgpu_anim::cpu::fused(a.controller().library(), &mut page).unwrap();
    for (i, (g, c)) in gpu_clocks.iter().zip(&clocks).enumerate() {
        common::assert_clock(&a, frame.dt, i, g, c);
    }
    // Snapshots kept this frame, then palettes: per joint within 1e-5 per level of the hierarchy
    // (each level adds about one stage's rounding, as in the other end-to-end comparisons).
    let kept = a.read_snapshots(&device, &queue).unwrap();
    compare("snapshot", &kept, &history[..kept.len()], 2e-5, pose_error).unwrap();
    let mut worst = 0.0f32;
    let mut far = 0;
    for inst in a.controller().instances() {
        let depths = lib.skeletons()[inst.skeleton as usize].depths();
        for (j, depth) in depths.iter().enumerate() {
            let k = inst.joint_offset as usize + j;
            let e = affine_error(&gpu.palette[k], &palettes[k]);
            if e > 1e-5 * (*depth as f32 + 2.0) {
                far += 1;
            }
            worst = worst.max(e);
        }
    }
    eprintln!(
        "cpu::fused vs GPU fused: worst palette error {worst:e}, {far} joints beyond tolerance, {keeping} keeping"
    );
    assert!(keeping > 20, "{keeping} instances kept their pose");
    assert_eq!(far, 0, "worst {worst:e}");
    // The comparison catches a palette that is off.
    let mut altered = palettes.clone();
    altered[7].x.w += 1e-3;
    assert!(compare("palette", &gpu.palette, &altered, 1e-3 * 0.5, affine_error).is_err());
}

/// The socket matrices of the fused path against `cpu::fused`: a crowd of two skeletons, the
/// second with three sockets, fed the GPU's clocks from before a frame; after it, every socket
/// matrix (world · model[joint] · offset, from the workgroup's model matrices) within 1e-5 per
/// level of its joint's depth plus 3e-5, as the palettes are; a matrix one slot off fails.
#[test]
fn the_fused_mirror_writes_the_sockets_the_fused_gpu_path_writes() {
    use wgpu_anim::layout::MAX_SOCKETS;
    let (device, queue) = common::device();
    let (lib, _) = common::random_library_with_sockets(9, &[1, 40], &[0, 3]);
    let n = 200;
    let mut a = crowd(&device, &lib, true, n);
    for dt in [0.0, 0.1] {
        step(&device, &queue, &mut a, dt);
    }
    let (mut clocks, _) = a.read_back(&device, &queue).unwrap();
    let max = a.max_joints() as usize;
    // The pose history: the snapshots, then room for velocities.
    let mut history = vec![wgpu_anim::layout::LocalPose::default(); 2 * max];
    let snapshots = a.read_snapshots(&device, &queue).unwrap();
    history[..snapshots.len()].copy_from_slice(&snapshots);
    let dt = 0.016;
    step(&device, &queue, &mut a, dt);
    let gpu = a.read_sockets_page(&device, &queue, 0).unwrap();
    assert_eq!(a.controller().pages_in_use(), 1);
    let frame = wgpu_anim::layout::GpuFrame {
        dt,
        instance_count: n as u32,
        snapshot_offset: max as u32,
        ..Default::default()
    };
    let slots = MAX_SOCKETS as usize;
    let mut palettes = vec![wgpu_anim::Affine::IDENTITY; max + n * slots];
    palettes[max..].fill(bytemuck::Zeroable::zeroed());
    let mut instances = a.controller().instances().to_vec();
    let mut lists = vec![wgpu_anim::layout::BlendList::default(); n];
    let mut page = PageBuffers::new(&frame, &mut instances)
        .layer_defs(a.controller().layer_defs())
        .clocks(&mut clocks)
        .blend_lists(&mut lists)
        .pose_history(&mut history)
        .palettes(&mut palettes);
    wgpu_anim::cpu::clock(a.controller().library(), &mut page).unwrap();
    wgpu_anim::cpu::fused(a.controller().library(), &mut page).unwrap();
    let want = &palettes[max..];
    let mut checked = 0;
    for (i, inst) in a.controller().instances().iter().enumerate() {
        let skeleton = &lib.skeletons()[inst.skeleton as usize];
        let depths = skeleton.depths();
        for (s, socket) in skeleton.sockets().iter().enumerate() {
            let k = i * slots + s;
            let e = affine_error(&gpu[k], &want[k]);
            let tolerance = 1e-5 * (depths[socket.joint] + 3) as f32;
            assert!(
                e <= tolerance,
                "instance {i} socket {s}: off by {e:e} (tolerance {tolerance:e})"
            );
            checked += 1;
        }
        for s in skeleton.sockets().len()..slots {
            assert_eq!(gpu[i * slots + s], want[i * slots + s], "unused slots stay zero");
        }
    }
    assert!(checked > 200, "{checked} sockets checked");
    assert!(compare("shifted", &gpu[1..], &want[..want.len() - 1], 1e-3, affine_error).is_err());
}

/// With culling the fused mirror reads the marks the clock wrote to the outputs: a page without
/// them is refused, and nothing is written.
#[test]
fn the_fused_mirror_with_culling_needs_the_outputs() {
    let (lib, _, clips) = wgpu_anim::mannequin::library();
    let mut instances = vec![wgpu_anim::cpu::clip_instance(&lib, clips[1], 0).unwrap()];
    let frame = wgpu_anim::layout::GpuFrame {
        dt: 0.016,
        instance_count: 1,
        snapshot_offset: 53,
        flags: wgpu_anim::layout::FRAME_CULL,
        ..Default::default()
    };
    let mut lists = vec![wgpu_anim::layout::BlendList::default(); 1];
    let mut history = vec![wgpu_anim::layout::LocalPose::default(); 2 * 53];
    let mut palettes = vec![wgpu_anim::Affine::IDENTITY; 53];
    let mut page = PageBuffers::new(&frame, &mut instances)
        .blend_lists(&mut lists)
        .pose_history(&mut history)
        .palettes(&mut palettes);
    let e = wgpu_anim::cpu::fused(&lib, &mut page).unwrap_err().to_string();
    assert!(e.contains("outputs"), "{e}");
    assert!(palettes.iter().all(|p| *p == wgpu_anim::Affine::IDENTITY));
}
