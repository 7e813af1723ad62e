//! The CPU mirror given what the controller never makes: every public `cpu::` function either
//! computes or returns an error naming what is wrong, and never panics (an index past the end, an
//! overflow, an allocation sized by garbage), whatever the instances, blend lists, clocks, layer
//! definitions, blend nodes, frames and buffer lengths.

mod common;

use rand::rngs::SmallRng;
use rand::{Rng, RngCore};
use std::sync::Arc;
use wgpu_anim::cpu::PageBuffers;
use wgpu_anim::gpu::{Controller, Layer, LayerMode, Transition};
use wgpu_anim::layout::{
    BlendList, GpuClock, GpuFrame, GpuInstance, GpuLayerDef, LocalPose, MAX_BLEND_CLIPS, MAX_SOCKETS, SNAPSHOT_CLIP,
    Ticks,
};
use wgpu_anim::{Affine, AnimationLibrary, Error, cpu};

const SKELETONS: [usize; 3] = [1, 37, 130];

/// Random clips, trees and masks on [`SKELETONS`]; the second with 2 sockets, the third with 4
/// (so that `palette` and `fused` write socket matrices, and check the room for them).
fn library() -> (AnimationLibrary, Vec<wgpu_anim::Clip>) {
    common::random_library_with_sockets(3, &SKELETONS, &[0, 2, 4])
}
/// Instances in the valid crowd the mutations start from.
const CROWD: usize = 24;

/// A valid crowd, as the controller makes it (clips, trees, cross-fades from clips, trees and
/// snapshots, layers), its layer definitions and one frame's clocks and blend lists.
fn crowd(lib: &Arc<AnimationLibrary>) -> (Vec<GpuInstance>, Vec<GpuLayerDef>, Vec<GpuClock>, Vec<BlendList>, u32) {
    let mut r = common::rng(5);
    let joints: u32 = (0..CROWD).map(|i| SKELETONS[i % 3] as u32).sum();
    let mut c = Controller::new(lib.clone(), CROWD as u32, &[(CROWD as u32, joints)]).unwrap();
    for i in 0..CROWD {
        c.add_instance(&common::random_state(&mut r, lib, (i % 3) as u32))
            .unwrap();
    }
    c.begin_frame(0.1);
    for i in 0..CROWD {
        let skeleton = (i % 3) as u32;
        if i % 2 == 0 {
            let fade = Transition::linear(0.5);
            c.play(i, &common::random_state(&mut r, lib, skeleton), Some(fade))
                .unwrap();
            if i % 4 == 0 {
                // Interrupts: held a frame, then a cross-fade from a snapshot.
                c.play(i, &common::random_state(&mut r, lib, skeleton), Some(fade))
                    .unwrap();
            }
        }
        let base = common::random_state(&mut r, lib, skeleton);
        let mut layer = match base.tree {
            Some(t) => Layer::tree(LayerMode::AdditiveMesh, t),
            None => Layer::clip(LayerMode::Override, base.clip),
        };
        layer.mask = (i % 3 == 1).then(|| lib.mask_at(skeleton).unwrap());
        c.set_layer(i, i % 3, Some(&layer), false).unwrap();
    }
    c.begin_frame(0.1);
    c.begin_frame(0.1);
    let frame = frame(CROWD, joints);
    let (mut instances, defs) = (c.instances().to_vec(), c.layer_defs().to_vec());
    let mut clocks = vec![GpuClock::default(); CROWD];
    let mut lists = vec![BlendList::default(); CROWD];
    let mut page = PageBuffers::new(&frame, &mut instances)
        .layer_defs(&defs)
        .clocks(&mut clocks)
        .blend_lists(&mut lists);
    cpu::clock(lib, &mut page).unwrap();
    (instances, defs, clocks, lists, joints)
}

fn frame(n: usize, joints: u32) -> GpuFrame {
    GpuFrame {
        dt: 1.0 / 60.0,
        instance_count: n as u32,
        snapshot_offset: joints,
        ..Default::default()
    }
}

/// An index: in range, just past the end, or far beyond.
fn index(r: &mut SmallRng, len: usize) -> u32 {
    match r.gen_range(0..5) {
        0 => u32::MAX,
        1 => len as u32,
        2 => r.next_u32(),
        _ => r.gen_range(0..len.max(1)) as u32,
    }
}

fn float(r: &mut SmallRng) -> f32 {
    [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        -1e30,
        0.0,
        -0.0,
        1e-40,
        0.5,
    ][r.gen_range(0..9)]
}

/// One random field of `inst` (or of its clock or blend list) set to an index past the end, a
/// huge count, a random bit pattern or an extreme float.
fn mutate(
    r: &mut SmallRng,
    lib: &AnimationLibrary,
    inst: &mut GpuInstance,
    clock: &mut GpuClock,
    list: &mut BlendList,
) {
    let clips = lib.clips().len();
    match r.gen_range(0..22) {
        0 => inst.clip = index(r, clips),
        1 => inst.skeleton = index(r, 3),
        2 => inst.joint_offset = index(r, 200),
        3 => inst.joint_count = index(r, 131),
        4 => inst.tree_offset = index(r, lib.blend().nodes.len()),
        5 => inst.tree_nodes = index(r, 40),
        6 => inst.source_clip = index(r, clips),
        7 => inst.source_tree_offset = index(r, lib.blend().nodes.len()),
        8 => inst.source_tree_nodes = index(r, 40),
        9 => inst.flags = r.next_u32(),
        10 => inst.layers[r.gen_range(0..3)].def = index(r, 8),
        11 => inst.loop_mode = r.next_u32(),
        12 => inst.loop_count = r.next_u32(),
        13 => inst.rate = float(r),
        14 => inst.params = glam::Vec4::new(float(r), float(r), float(r), float(r)),
        15 => inst.transition_duration = float(r),
        16 => {
            clock.time = Ticks {
                lo: r.next_u32(),
                hi: r.next_u32(),
            };
            clock.loops = r.next_u32();
        }
        17 => {
            clock.transition_time = Ticks {
                lo: r.next_u32(),
                hi: r.next_u32(),
            };
            clock.layer_time[r.gen_range(0..3)] = Ticks {
                lo: r.next_u32(),
                hi: r.next_u32(),
            };
            clock.source_time = Ticks {
                lo: r.next_u32(),
                hi: r.next_u32(),
            };
        }
        18 => list.count = r.next_u32(),
        19 => {
            let k = r.gen_range(0..MAX_BLEND_CLIPS as usize);
            list.samples[k].clip = if r.gen_bool(0.3) {
                SNAPSHOT_CLIP
            } else {
                index(r, clips)
            };
            list.samples[k].time = float(r);
            list.samples[k].weight = float(r);
        }
        20 => {
            let k = r.gen_range(0..3);
            list.layers[k].mode = r.gen_range(0..5);
            list.layers[k].mask = index(r, 200);
        }
        _ => inst.start_time = float(r),
    }
}

/// 20,000 mutated frames of three instances (the middle one mutated; sometimes the frame's count,
/// its `dt` or the local pose buffer's length too) through every stage and `evaluate`: each
/// computes or refuses, never panics; a refusal that names an instance names the mutated one, and
/// both outcomes happen often (so the checks neither refuse everything nor let everything through).
/// Floats are not refused (NaN, ±inf, huge): the mirror computes with them as the GPU does.
#[test]
fn every_stage_computes_or_refuses_and_never_panics() {
    let (lib, _) = library();
    let lib = Arc::new(lib);
    let (instances, defs, clocks, lists, _) = crowd(&lib);
    let mut r = common::rng(77);
    let (mut refused, mut computed) = (0, 0);
    for round in 0..20_000 {
        let k = r.gen_range(1..CROWD - 1);
        let mut inst: Vec<GpuInstance> = instances[k - 1..=k + 1].to_vec();
        let mut clk: Vec<GpuClock> = clocks[k - 1..=k + 1].to_vec();
        let mut lst: Vec<BlendList> = lists[k - 1..=k + 1].to_vec();
        for _ in 0..r.gen_range(1..4) {
            mutate(&mut r, &lib, &mut inst[1], &mut clk[1], &mut lst[1]);
        }
        // Relative joint offsets, the middle one possibly mutated beyond them.
        let base = inst[0].joint_offset;
        for i in [0, 2] {
            inst[i].joint_offset -= base;
        }
        if inst[1].joint_offset >= base && round % 2 == 0 {
            inst[1].joint_offset -= base;
        }
        let joints = 3 * 130;
        let mut fr = frame(3, joints);
        if round % 50 == 0 {
            fr.instance_count = r.next_u32();
        }
        if round % 7 == 0 {
            fr.dt = float(&mut r);
        }
        // Current poses and mesh-space deltas; snapshots and velocities (one short now and then).
        let short = usize::from(round % 97 == 0);
        let mut local = vec![LocalPose::default(); 2 * joints as usize - short];
        let mut history = vec![LocalPose::default(); 2 * joints as usize - short];
        let mut model = vec![Affine::IDENTITY; joints as usize];
        // The palettes, then three instances' socket matrices.
        let mut palettes = vec![Affine::IDENTITY; joints as usize + 3 * MAX_SOCKETS as usize];
        let results: [wgpu_anim::Result<()>; 5] = [
            cpu::clock(
                &lib,
                &mut PageBuffers::new(&fr, &mut inst)
                    .layer_defs(&defs)
                    .clocks(&mut clk.clone())
                    .blend_lists(&mut lst.clone()),
            ),
            cpu::sample(
                &lib,
                &mut PageBuffers::new(&fr, &mut inst)
                    .blend_lists(&mut lst)
                    .local_poses(&mut local)
                    .pose_history(&mut history),
            ),
            cpu::local_to_model(
                &lib,
                &mut PageBuffers::new(&fr, &mut inst)
                    .local_poses(&mut local)
                    .model_poses(&mut model),
            ),
            cpu::palette(
                &lib,
                &mut PageBuffers::new(&fr, &mut inst)
                    .model_poses(&mut model)
                    .palettes(&mut palettes),
            ),
            cpu::fused(
                &lib,
                &mut PageBuffers::new(&fr, &mut inst)
                    .layer_defs(&defs)
                    .clocks(&mut clk)
                    .pose_history(&mut history)
                    .palettes(&mut palettes),
            ),
        ];
        for result in results {
            match result {
                Ok(()) => computed += 1,
                Err(Error::Instance { instance, what }) => {
                    assert_eq!(
                        instance, 1,
                        "round {round}: the refusal names the mutated instance: {what}"
                    );
                    refused += 1;
                }
                Err(Error::Limit { .. }) => refused += 1,
                Err(e) => panic!("round {round}: an unexpected error: {e}"),
            }
        }
        let _ = cpu::evaluate(&lib, &inst, &lst);
    }
    assert!(
        refused > 10_000 && computed > 10_000,
        "{refused} refused, {computed} computed"
    );
}

/// The per-joint and per-instance functions, and those of one clip, given what is not in the
/// library: an error each, never a panic.
#[test]
fn the_single_functions_refuse_what_is_not_in_the_library() {
    let (lib, _) = library();
    let lib = Arc::new(lib);
    let (instances, defs, clocks, lists, _) = crowd(&lib);
    // A clip of another library, in range in this one.
    let missing = library().0.clip_at(0).unwrap();
    assert!(cpu::pose_at(&lib, missing, 0.5).is_err());
    assert!(cpu::clip_instance(&lib, missing, 0).is_err());
    assert!(
        cpu::pose_at(&lib, lib.clip_at(0).unwrap(), f32::NAN).is_ok(),
        "a NaN time is a value, not an index"
    );

    // advance_instance: a layer definition that is not given.
    let mut list = BlendList::default();
    assert!(cpu::advance_instance(&lib, &defs, &instances[3], &clocks[3], 0.1, &mut list).is_ok());
    let layered = instances
        .iter()
        .position(|i| i.flags & wgpu_anim::layout::LAYER_ON != 0)
        .unwrap();
    let e = cpu::advance_instance(&lib, &[], &instances[layered], &clocks[layered], 0.1, &mut list).unwrap_err();
    assert!(e.to_string().contains("definition"), "{e}");

    // tree_leaves past the library's nodes.
    let nodes = lib.blend().nodes.len() as u32;
    assert!(cpu::tree_leaves(&lib, nodes - 1, 2, glam::Vec4::ZERO).is_err());
    assert!(cpu::tree_leaves(&lib, u32::MAX, 1, glam::Vec4::ZERO).is_err());

    // sample_joint and layered_joint: a joint the clip or skeleton does not have, a clip or
    // skeleton made up, a list naming a clip that does not exist, a snapshot slot past the poses.
    let clip = lib.clips()[0];
    assert!(cpu::sample_joint(&lib, &clip, 0, 0.1).is_ok());
    assert!(cpu::sample_joint(&lib, &clip, clip.joint_count, 0.1).is_err());
    let forged = wgpu_anim::layout::GpuClip {
        track_offset: u32::MAX - 1,
        ..clip
    };
    assert!(cpu::sample_joint(&lib, &forged, 0, 0.1).is_err());
    let skel = lib.gpu_skeletons()[1];
    assert!(cpu::layered_joint(&lib, &lists[1], &skel, 3, 0, &[]).is_ok());
    assert!(cpu::layered_joint(&lib, &lists[1], &skel, skel.joint_count, 0, &[]).is_err());
    let mut bad = lists[1];
    bad.samples[0].clip = lib.clips().len() as u32 + 7;
    bad.count = bad.count.max(1);
    assert!(cpu::layered_joint(&lib, &bad, &skel, 3, 0, &[]).is_err());
    bad.samples[0].clip = SNAPSHOT_CLIP;
    assert!(cpu::layered_joint(&lib, &bad, &skel, 3, 5, &[LocalPose::default(); 5]).is_err());
    assert!(cpu::layered_joint(&lib, &bad, &skel, 3, 4, &[LocalPose::default(); 5]).is_ok());
    bad.count = u32::MAX;
    let _ = cpu::layered_joint(&lib, &bad, &skel, 3, 4, &[LocalPose::default(); 5]);

    // node_child_weights on nodes and libraries made up.
    let blend = lib.blend();
    for node in &blend.nodes {
        assert!(cpu::node_child_weights(blend, node, glam::Vec4::ONE).is_ok());
    }
    let mut r = common::rng(9);
    for _ in 0..2000 {
        let mut node = blend.nodes[r.gen_range(0..blend.nodes.len())];
        match r.gen_range(0..4) {
            0 => node.child_offset = index(&mut r, blend.children.len()),
            1 => node.child_count = index(&mut r, 17),
            2 => node.triangle_offset = index(&mut r, blend.triangles.len()),
            _ => node.triangle_count = index(&mut r, 40),
        }
        node.kind = if r.gen_bool(0.3) { r.gen_range(0..12) } else { node.kind };
        let _ = cpu::node_child_weights(blend, &node, glam::Vec4::new(float(&mut r), 0.5, float(&mut r), 1.0));
    }
    let mut forged = blend.clone();
    for t in &mut forged.triangles {
        t[0] = 15;
    }
    let delaunay = forged
        .nodes
        .iter()
        .find(|n| n.kind == wgpu_anim::layout::node_kind::DELAUNAY);
    if let Some(node) = delaunay {
        let e = cpu::node_child_weights(&forged, node, glam::Vec4::ZERO).unwrap_err();
        assert!(e.to_string().contains("triangle"), "{e}");
    }

    // skin_vertex and skin: a joint past the palettes.
    let palettes = vec![Affine::IDENTITY; 4];
    let v = wgpu_anim::mesh::SkinVertex {
        joints: [0, 1, 2, 3],
        weights: [0.25; 4],
        ..bytemuck::Zeroable::zeroed()
    };
    assert!(cpu::skin_vertex(&palettes, 0, &v).is_ok());
    assert!(cpu::skin_vertex(&palettes, 1, &v).is_err());
    assert!(cpu::skin(&palettes, u32::MAX, &[v]).is_err());

    // add_sample on a list whose count is past its room.
    let mut full = BlendList {
        count: u32::MAX,
        ..Default::default()
    };
    cpu::add_sample(&mut full, 0, 0.0, 1.0, 0);
}

/// A frame whose buffers are too short (the palettes without room for the socket matrices
/// included), or whose count is past the instances given: a [`Error::Limit`] saying which, and
/// nothing written.
#[test]
fn short_buffers_are_refused_before_anything_is_written() {
    let (lib, _) = library();
    let lib = Arc::new(lib);
    let (mut instances, _, _, mut lists, joints) = crowd(&lib);
    let fr = frame(CROWD, joints);
    let mut local = vec![LocalPose::default(); joints as usize - 1];
    let mut history = vec![LocalPose::default(); joints as usize];
    let mut page = PageBuffers::new(&fr, &mut instances)
        .blend_lists(&mut lists)
        .local_poses(&mut local)
        .pose_history(&mut history);
    let e = cpu::sample(&lib, &mut page).unwrap_err();
    assert!(e.to_string().contains("local pose buffer"), "{e}");
    assert!(local.iter().all(|p| *p == LocalPose::default()), "nothing written");
    // The snapshots are the pose history's (the crowd plays mesh-space layers: its local poses
    // hold the deltas too).
    let mut local = vec![LocalPose::default(); 2 * joints as usize];
    let mut history = vec![LocalPose::default(); joints as usize - 1];
    let mut page = PageBuffers::new(&fr, &mut instances)
        .blend_lists(&mut lists)
        .local_poses(&mut local)
        .pose_history(&mut history);
    let e = cpu::sample(&lib, &mut page).unwrap_err();
    assert!(e.to_string().contains("pose history"), "{e}");
    assert!(local.iter().all(|p| *p == LocalPose::default()), "nothing written");
    let fr_more = frame(CROWD + 1, joints);
    let mut page = PageBuffers::new(&fr_more, &mut instances)
        .blend_lists(&mut lists)
        .local_poses(&mut local)
        .pose_history(&mut history);
    let e = cpu::sample(&lib, &mut page).unwrap_err();
    assert!(e.to_string().contains("instances"), "{e}");
    let mut model = vec![Affine::IDENTITY; joints as usize - 1];
    let mut local = vec![LocalPose::default(); 2 * joints as usize];
    let mut page = PageBuffers::new(&fr, &mut instances)
        .local_poses(&mut local)
        .model_poses(&mut model);
    let e = cpu::local_to_model(&lib, &mut page).unwrap_err();
    assert!(e.to_string().contains("model pose buffer"), "{e}");
    // Palettes with no room for the socket matrices after them.
    let mut model = vec![Affine::IDENTITY; joints as usize];
    let mut palettes = vec![Affine::IDENTITY; joints as usize];
    let mut page = PageBuffers::new(&fr, &mut instances)
        .model_poses(&mut model)
        .palettes(&mut palettes);
    let e = cpu::palette(&lib, &mut page).unwrap_err();
    assert!(e.to_string().contains("socket matrices"), "{e}");
    let mut palettes = vec![Affine::IDENTITY; joints as usize + CROWD * MAX_SOCKETS as usize];
    let mut page = PageBuffers::new(&fr, &mut instances)
        .model_poses(&mut model)
        .palettes(&mut palettes);
    cpu::palette(&lib, &mut page).unwrap();
}
