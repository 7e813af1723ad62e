//! Layers: difference clips, masks, additive application in local and mesh space, the time axis
//! as a parameter, and bad input.

mod common;

use glam::{Quat, Vec3, Vec4, Vec4Swizzles};
use wgpu_anim::layout::{
    BlendList, BlendSample, GpuInstance, GpuLayerDef, LAYER_ON, LayerApply, LocalPose, NO_MASK, layer_mode,
};
use wgpu_anim::mannequin::{self, layer_assets};
use wgpu_anim::offline::layers::{Reference, difference_clip, mask_from_joint, mask_from_joints};
use wgpu_anim::{AnimationLibrary, Clip, ClipId, JointTrack, LibraryBuilder, Track, cpu};

/// A list with a base clip sample and one layer of `mode` playing `layer_clip` at `layer_time`.
fn list(base: (ClipId, f32), layer: Option<(u32, f32, u32, ClipId, f32)>) -> BlendList {
    let mut l = BlendList::default();
    cpu::add_sample(&mut l, base.0.index(), base.1, 1.0, 0);
    if let Some((mode, weight, mask, clip, time)) = layer {
        l.layers[0] = LayerApply {
            mode,
            weight,
            mask,
            previous_weight: weight,
        };
        l.mesh_additive = u32::from(mode == layer_mode::ADDITIVE_MESH);
        cpu::add_sample(&mut l, clip.index(), time, 1.0, 1);
    }
    l
}

fn instance(lib: &AnimationLibrary, mode: u32) -> GpuInstance {
    let mut inst = cpu::clip_instance(lib, lib.clip_at(0).unwrap(), 0).unwrap();
    let def = GpuLayerDef {
        mode,
        ..Default::default()
    };
    inst.set_layer_flags(0, (mode != layer_mode::OFF).then_some(&def));
    inst
}

fn pose_error(a: &LocalPose, b: &LocalPose) -> f32 {
    let t = (a.translation - b.translation).abs().max_element();
    let s = (a.scale - b.scale).abs().max_element();
    t.max(s).max(1.0 - a.rotation.dot(b.rotation).abs())
}

/// A library of the mannequin with extra clips.
fn library_with(extra: &[Clip]) -> (AnimationLibrary, Vec<ClipId>) {
    let m = mannequin::mannequin();
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(m.skeleton.clone());
    let mut ids: Vec<ClipId> = m.clips.iter().map(|c| b.add_clip(s, c).unwrap()).collect();
    ids.extend(extra.iter().map(|c| b.add_clip(s, c).unwrap()));
    (b.build(), ids)
}

#[test]
fn a_difference_clip_applied_to_its_reference_gives_the_source_back() {
    let m = mannequin::mannequin();
    let (walk, idle) = (&m.clips[1], &m.clips[0]);
    let d = difference_clip(
        &m.skeleton,
        "walk_minus_idle",
        walk,
        Reference::Pose { clip: idle, time: 0.0 },
    )
    .unwrap();
    // Against a whole clip of the same duration too.
    let mut shifted = walk.clone();
    shifted.name = "walk_ref".into();
    for t in &mut shifted.tracks {
        if let Some(r) = &mut t.rotation {
            let n = r.values.len();
            r.values.rotate_left(n / 3);
        }
    }
    let d2 = difference_clip(&m.skeleton, "walk_minus_shifted", walk, Reference::Clip(&shifted)).unwrap();
    let (lib, ids) = library_with(&[d, d2, shifted]);
    let (walk, idle, d, d2, shifted) = (ids[1], ids[0], ids[6], ids[7], ids[8]);
    let skel = lib.gpu_skeletons()[0];
    let mut worst = 0.0f32;
    for k in 0..40 {
        let t = k as f32 / 30.0 * 0.77;
        let want = cpu::pose_at(&lib, walk, t).unwrap();
        for (base, diff) in [((idle, 0.0), d), ((shifted, t), d2)] {
            let l = list(base, Some((layer_mode::ADDITIVE_LOCAL, 1.0, NO_MASK, diff, t)));
            for j in 0..skel.joint_count {
                let (got, _) = cpu::layered_joint(&lib, &l, &skel, j, 0, &[]).unwrap();
                worst = worst.max(pose_error(&got, &want.local[j as usize]));
            }
        }
    }
    assert!(worst < 2e-4, "R + (S − R) differs from S by {worst}");
}

#[test]
fn zero_weight_leaves_the_target_unchanged_and_masks_select_joints() {
    let (lib, _, clips) = mannequin::library();
    let skeleton = &lib.skeletons()[0];
    let skel = lib.gpu_skeletons()[0];
    let wave = lib.clip_id(lib.skeleton_at(0).unwrap(), layer_assets::WAVE).unwrap();
    let arm = lib.masks()[lib.mask_id(layer_assets::RIGHT_ARM).unwrap().index() as usize].offset;
    let base = (clips[1], 0.4);
    let plain = cpu::pose_at(&lib, clips[1], 0.4).unwrap();
    let wave_pose = cpu::pose_at(&lib, wave, 0.4).unwrap();
    let weights = mask_from_joint(skeleton, "clavicle_r", 2).unwrap();
    for mode in [layer_mode::OVERRIDE, layer_mode::ADDITIVE_LOCAL] {
        let l = list(base, Some((mode, 0.0, NO_MASK, wave, 0.4)));
        for j in 0..skel.joint_count {
            let (p, _) = cpu::layered_joint(&lib, &l, &skel, j, 0, &[]).unwrap();
            assert!(
                pose_error(&p, &plain.local[j as usize]) < 1e-6,
                "weight 0 changed joint {j}"
            );
        }
    }
    let l = list(base, Some((layer_mode::OVERRIDE, 1.0, arm, wave, 0.4)));
    for (j, weight) in weights.iter().enumerate() {
        let (p, _) = cpu::layered_joint(&lib, &l, &skel, j as u32, 0, &[]).unwrap();
        match *weight {
            0.0 => assert_eq!(p, plain.local[j], "joint {j} is outside the mask"),
            1.0 => assert!(pose_error(&p, &wave_pose.local[j]) < 1e-6, "joint {j} takes the layer"),
            _ => {}
        }
    }
    assert!(
        weights.iter().any(|&w| w > 0.0 && w < 1.0),
        "the ramp has partial weights"
    );
}

#[test]
fn blend_depth_ramps_are_monotonic_down_the_hierarchy() {
    let s = mannequin::skeleton();
    for (joint, depth) in [("spine_01", 4), ("clavicle_l", 2), ("pelvis", 3), ("hand_r", 1)] {
        let w = mask_from_joint(&s, joint, depth).unwrap();
        let root = s.joint_index(joint).unwrap();
        for (j, p) in s.parents().iter().enumerate() {
            if let Some(p) = p {
                let p = *p as usize;
                if w[p] > 0.0 || j == root {
                    assert!(
                        w[j] >= w[p] || j == root,
                        "{joint}/{depth}: child {j} {} < parent {p} {}",
                        w[j],
                        w[p]
                    );
                }
            }
        }
        assert!(w[root] > 0.0 && (w[root] - 1.0 / depth.max(1) as f32).abs() < 1e-6);
        assert!(w.iter().all(|&x| (0.0..=1.0).contains(&x)));
    }
    assert!(
        mask_from_joint(&s, "tail", 2)
            .unwrap_err()
            .to_string()
            .contains("'tail'")
    );
    assert_eq!(
        mask_from_joints(&s, &["head"])
            .unwrap()
            .iter()
            .filter(|&&x| x == 1.0)
            .count(),
        1
    );
}

/// A mannequin pose clip of constant rotations.
fn pose(name: &str, rotations: &[(&str, Quat)]) -> Clip {
    Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: name.into(),
        duration: 1.0,
        looping: false,
        tracks: rotations
            .iter()
            .map(|(j, q)| JointTrack {
                joint: (*j).into(),
                rotation: Some(Track::constant(*q)),
                ..Default::default()
            })
            .collect(),
    }
}

#[test]
fn mesh_space_aim_keeps_its_direction_when_the_spine_turns_and_local_space_does_not() {
    // Unreal's aim-offset experiment: an aim-up delta at the hand (a pitch about the
    // character's x axis), on a base pose whose spine is yawed 60°.
    let m = mannequin::mannequin();
    let rest = pose("rest", &[]);
    let up = pose("hand_up", &[("hand_r", Quat::from_rotation_x(-0.6))]);
    let aim_up = difference_clip(&m.skeleton, "aim_up", &up, Reference::Pose { clip: &rest, time: 0.0 }).unwrap();
    let yawed = pose("yawed", &[("spine_02", Quat::from_rotation_y(60f32.to_radians()))]);
    let (lib, ids) = library_with(&[aim_up, yawed]);
    let (aim_up, yawed) = (ids[6], ids[7]);
    let hand = m.skeleton.joint_index("hand_r").unwrap();
    let model_rotation = |mode: Option<u32>| -> Quat {
        let l = list((yawed, 0.0), mode.map(|md| (md, 1.0, NO_MASK, aim_up, 0.0)));
        let pose = cpu::evaluate(&lib, &[instance(&lib, mode.unwrap_or(0))], &[l]).unwrap();
        Quat::from_mat4(&pose.model[hand].to_mat4()).normalize()
    };
    let base = model_rotation(None);
    let axis_of = |q: Quat| {
        let (axis, angle) = (q * base.inverse()).to_axis_angle();
        (axis, angle)
    };
    let (mesh_axis, mesh_angle) = axis_of(model_rotation(Some(layer_mode::ADDITIVE_MESH)));
    let (local_axis, local_angle) = axis_of(model_rotation(Some(layer_mode::ADDITIVE_LOCAL)));
    assert!(
        (mesh_angle - 0.6).abs() < 1e-3 && (local_angle - 0.6).abs() < 1e-3,
        "{mesh_angle} {local_angle}"
    );
    // Mesh space: the hand turns about the character's x axis, whatever the spine does.
    assert!(mesh_axis.abs().dot(Vec3::X) > 0.999, "mesh-space axis {mesh_axis}");
    // Local space: the axis turned with the spine's 60° yaw.
    let turned = Quat::from_rotation_y(60f32.to_radians()) * Vec3::X;
    assert!(
        local_axis.abs().dot(turned.abs()) > 0.999,
        "local-space axis {local_axis}, expected {turned}"
    );
    assert!(local_axis.abs().dot(Vec3::X) < 0.6);
}

#[test]
fn a_clip_time_axis_can_be_a_parameter() {
    let (lib, _, clips) = mannequin::library();
    let sweep = lib
        .clip_id(lib.skeleton_at(0).unwrap(), layer_assets::AIM_SWEEP)
        .unwrap();
    let spine = lib.skeletons()[0].joint_index("spine_03").unwrap() as u32;
    let skel = lib.gpu_skeletons()[0];
    // Frame 1.5 of left (0) / centre (1) / right (2): half way from centre to right.
    let l = list(
        (clips[0], 0.0),
        Some((layer_mode::ADDITIVE_LOCAL, 1.0, NO_MASK, sweep, 1.5)),
    );
    let (p, _) = cpu::layered_joint(&lib, &l, &skel, spine, 0, &[]).unwrap();
    let yaw = Quat::from_vec4(p.rotation).to_euler(glam::EulerRot::YXZ).0;
    assert!((yaw + 17.5f32.to_radians()).abs() < 0.01, "yaw {}°", yaw.to_degrees());
    // Through the clock stage: a layer with a time parameter samples where the parameter says.
    let mut inst = cpu::clip_instance(&lib, clips[0], 0).unwrap();
    inst.params = Vec4::new(0.0, 0.0, 1.5, 0.0);
    let def = GpuLayerDef {
        mode: layer_mode::ADDITIVE_LOCAL,
        mask: NO_MASK,
        clip: sweep.index(),
        time_parameter: 2,
        loop_mode: wgpu_anim::layout::LOOP_FOREVER,
        ..Default::default()
    };
    inst.layers[0] = wgpu_anim::layout::GpuLayer {
        weight: 1.0,
        ..Default::default()
    };
    inst.set_layer_flags(0, Some(&def));
    let mut out = BlendList::default();
    let _ = cpu::advance_instance(&lib, &[def], &inst, &Default::default(), 0.5, &mut out).unwrap();
    let s: Vec<&BlendSample> = out.samples[..out.count as usize]
        .iter()
        .filter(|s| s.layer == 1)
        .collect();
    assert_eq!((s.len(), s[0].clip, s[0].time), (1, sweep.index(), 1.5));
    let _ = p.translation.xyz();
}

#[test]
fn bad_layer_input_is_rejected() {
    let m = mannequin::mannequin();
    let (walk, run) = (&m.clips[1], &m.clips[2]);
    let e = difference_clip(&m.skeleton, "d", walk, Reference::Clip(run))
        .unwrap_err()
        .to_string();
    assert!(e.contains("lasts") && e.contains("'d'"), "{e}");
    let other = common::random_skeleton(&mut common::rng(1), "other", 5);
    let e = difference_clip(&other, "d", walk, Reference::Pose { clip: run, time: 0.0 })
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not have"), "{e}");
    // Clips the builder would refuse are refused here too, before anything samples them (the
    // library builder's fuzz target found a track with no keys reaching the sampler).
    let joint = m.skeleton.joint_names()[1].clone();
    let broken = |track: Track<Quat>| Clip {
        events: Vec::new(),
        curves: Vec::new(),
        name: "broken".into(),
        tracks: vec![JointTrack {
            joint: joint.clone(),
            translation: None,
            rotation: Some(track),
            scale: None,
        }],
        ..walk.clone()
    };
    let no_keys = broken(Track {
        times: vec![],
        values: vec![],
        ..Track::constant(Quat::IDENTITY)
    });
    let unsorted = broken(Track::linear([(0.5, Quat::IDENTITY), (0.25, Quat::IDENTITY)]));
    let nan = broken(Track::linear([(0.0, Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0))]));
    for bad in [&no_keys, &unsorted, &nan] {
        for e in [
            difference_clip(&m.skeleton, "d", bad, Reference::Pose { clip: walk, time: 0.0 }),
            difference_clip(&m.skeleton, "d", walk, Reference::Pose { clip: bad, time: 0.0 }),
            difference_clip(&m.skeleton, "d", bad, Reference::Clip(walk)),
            difference_clip(&m.skeleton, "d", walk, Reference::Clip(bad)),
        ] {
            let e = e.unwrap_err().to_string();
            assert!(e.contains("broken") && e.contains(&joint), "{e}");
        }
    }
    // A source too long for a difference clip is refused before anything is allocated (the
    // fuzz target's second find: a duration of 1e38 s overflowed a vector's capacity).
    let long = Clip {
        events: Vec::new(),
        curves: Vec::new(),
        duration: 1e38,
        ..walk.clone()
    };
    let e = difference_clip(&m.skeleton, "d", &long, Reference::Pose { clip: walk, time: 0.0 })
        .unwrap_err()
        .to_string();
    assert!(e.contains("more than 4194304"), "{e}");
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(m.skeleton.clone());
    assert!(
        b.add_mask(s, "short", &[1.0; 3])
            .unwrap_err()
            .to_string()
            .contains("3 weights")
    );
    let mut bad = vec![0.5; m.skeleton.joint_count()];
    bad[4] = f32::NAN;
    assert!(
        b.add_mask(s, "nan", &bad)
            .unwrap_err()
            .to_string()
            .contains("outside [0, 1]")
    );
    // At run time: NaN weights, masks of another skeleton, missing slots.
    let (device, _queue) = common::device();
    let (lib, _, clips) = mannequin::library();
    let mut a = wgpu_anim::Animator::new(&device, &lib, &Default::default()).unwrap();
    a.controller_mut()
        .add_instance(&wgpu_anim::InstanceDesc::new(clips[0]))
        .unwrap();
    use wgpu_anim::gpu::{Layer, LayerMode};
    let mut layer = Layer::clip(LayerMode::Override, clips[1]);
    layer.weight = f32::NAN;
    assert!(
        a.controller_mut()
            .set_layer(0, 0, Some(&layer), false)
            .unwrap_err()
            .to_string()
            .contains("finite")
    );
    layer.weight = 1.0;
    // A mask of another library (the same asset, built again).
    layer.mask = mannequin::library().0.mask_id(layer_assets::RIGHT_ARM);
    assert!(
        a.controller_mut()
            .set_layer(0, 0, Some(&layer), false)
            .unwrap_err()
            .to_string()
            .contains("belongs to another library")
    );
    layer.mask = None;
    let controller = a.controller_mut();
    assert!(
        controller
            .set_layer(0, 3, Some(&layer), false)
            .unwrap_err()
            .to_string()
            .contains("slot 3")
    );
    assert!(controller.set_layer_weight(0, 0, f32::INFINITY).is_err());
    assert_eq!(controller.instance(0).unwrap().flags & LAYER_ON, 0, "nothing changed");
    assert!(controller.layer_defs().is_empty(), "no layer definition added");
}

/// Runs one frame on the GPU (or only prepares it, when `run` is false) and reads the clocks.
fn layer_frame(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    a: &mut wgpu_anim::Animator,
    run: bool,
) -> Vec<wgpu_anim::layout::GpuClock> {
    a.prepare(queue, 0.1);
    if run {
        let mut e = device.create_command_encoder(&Default::default());
        a.encode(&mut e).unwrap();
        queue.submit([e.finish()]);
    }
    a.read_back(device, queue).unwrap().0
}

#[test]
fn layers_restart_on_the_gpu_even_after_a_frame_the_gpu_did_not_run() {
    use wgpu_anim::gpu::{Layer, LayerMode};
    let (device, queue) = common::device();
    let (lib, _, clips) = mannequin::library();
    let mut a = wgpu_anim::Animator::new(&device, &lib, &Default::default()).unwrap();
    let layer = Layer::clip(LayerMode::AdditiveLocal, clips[1]);
    for i in 0..2 {
        a.controller_mut()
            .add_instance(&wgpu_anim::InstanceDesc::new(clips[0]))
            .unwrap();
        for slot in 0..2 {
            a.controller_mut().set_layer(i, slot, Some(&layer), false).unwrap();
        }
    }
    assert_eq!(
        a.controller().layer_defs().len(),
        1,
        "four uses of one layer share its definition"
    );
    for _ in 0..3 {
        layer_frame(&device, &queue, &mut a, true);
    }
    // Instance 0 restarts layer 0 in a frame the GPU never runs, then layer 1 in the next.
    a.controller_mut()
        .set_layer(0, 0, Some(&layer.with_start(0.05)), true)
        .unwrap();
    let before = layer_frame(&device, &queue, &mut a, false);
    a.controller_mut()
        .set_layer(0, 1, Some(&layer.with_start(0.2)), true)
        .unwrap();
    let after = layer_frame(&device, &queue, &mut a, true);
    let close = |x: f32, y: f32| (x - y).abs() < 1e-5;
    assert!(
        close(after[0].layer_time[0].to_f32(), 0.15) && close(after[0].layer_time[1].to_f32(), 0.3),
        "instance 0 restarted both layers: {:?}",
        after[0]
    );
    assert!(
        close(after[1].layer_time[0].to_f32(), 0.4) && close(after[1].layer_time[1].to_f32(), 0.4),
        "instance 1 kept its layers running: {:?}",
        after[1]
    );
    // The CPU mirror, from the same clocks and instances, agrees.
    let frame = wgpu_anim::layout::GpuFrame {
        dt: 0.1,
        instance_count: 2,
        snapshot_offset: a.max_joints(),
        ..Default::default()
    };
    let mut clocks = before.clone();
    let mut lists = vec![BlendList::default(); 2];
    let mut instances = a.controller().instances().to_vec();
    let mut page = cpu::PageBuffers::new(&frame, &mut instances)
        .layer_defs(a.controller().layer_defs())
        .clocks(&mut clocks)
        .blend_lists(&mut lists);
    cpu::clock(&lib, &mut page).unwrap();
    // Clocks are integer ticks: the same bits on both sides.
    for (g, w) in after.iter().zip(&clocks) {
        assert_eq!(g, w, "GPU against the CPU mirror");
    }
    // Another mask makes another definition; the same layer again does not.
    let mask = lib.mask_id(layer_assets::RIGHT_ARM).expect("the built-in arm mask");
    let masked = layer.with_mask(Some(mask));
    let controller = a.controller_mut();
    for i in 0..2 {
        controller.set_layer(i, 2, Some(&masked), false).unwrap();
    }
    assert_eq!(controller.layer_defs().len(), 2);
    // A new state for the instance switches its layers off; one switched on again restarts.
    controller
        .set_instance(0, &wgpu_anim::InstanceDesc::new(clips[0]))
        .unwrap();
    controller
        .set_layer(0, 0, Some(&layer.with_start(0.25)), false)
        .unwrap();
    let again = layer_frame(&device, &queue, &mut a, true);
    assert!(close(again[0].layer_time[0].to_f32(), 0.35), "{:?}", again[0]);
}

#[test]
fn too_many_layer_definitions_is_an_error_that_changes_nothing() {
    use wgpu_anim::gpu::{Layer, LayerMode};
    use wgpu_anim::layout::MAX_LAYER_DEFS;
    let m = mannequin::mannequin();
    let clips: Vec<Clip> = (0..40)
        .map(|k| Clip {
            events: Vec::new(),
            curves: Vec::new(),
            name: format!("walk {k}"),
            ..m.clips[1].clone()
        })
        .collect();
    let (lib, ids) = library_with(&clips);
    let (device, _queue) = common::device();
    let mut a = wgpu_anim::Animator::new(&device, &lib, &Default::default()).unwrap();
    a.controller_mut()
        .add_instance(&wgpu_anim::InstanceDesc::new(ids[0]))
        .unwrap();
    let modes = [LayerMode::Override, LayerMode::AdditiveLocal, LayerMode::AdditiveMesh];
    let mut layers = ids.iter().flat_map(|&clip| {
        modes.into_iter().flat_map(move |mode| {
            [None, Some(0), Some(1), Some(2), Some(3)]
                .into_iter()
                .flat_map(move |time_parameter| {
                    [false, true].map(|once| {
                        Layer::clip(mode, clip)
                            .with_once(once)
                            .with_time_parameter(time_parameter)
                    })
                })
        })
    });
    for _ in 0..MAX_LAYER_DEFS {
        a.controller_mut()
            .set_layer(0, 0, Some(&layers.next().unwrap()), false)
            .unwrap();
    }
    let held = *a.controller().instance(0).unwrap();
    let e = a
        .controller_mut()
        .set_layer(0, 0, Some(&layers.next().unwrap()), false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("instance 0") && e.contains("layer 0") && e.contains("1024 layer definitions"),
        "{e}"
    );
    assert_eq!(*a.controller().instance(0).unwrap(), held, "the instance is unchanged");
    assert_eq!(a.controller().layer_defs().len(), MAX_LAYER_DEFS as usize);
}

/// An animator made without layers, inertialized transitions, dual quaternions and update-rate
/// LOD interpolation (`AnimatorDesc::layers`, `inertialization`, `dual_quaternion`,
/// `lod_interpolation` false) runs passes compiled without their code: for a crowd that uses
/// none of them, on the staged and the fused path, it computes the clocks and palettes of an
/// animator with all of them, through cross-fades that interrupt one another; and it refuses a
/// layer (switching one off is allowed) and an inertialized transition.
#[test]
fn an_animator_without_layers_computes_what_one_with_them_does_and_refuses_layers() {
    use rand::Rng;
    use wgpu_anim::AnimatorDesc;
    use wgpu_anim::gpu::{Layer, LayerMode, Transition};
    let (device, queue) = common::device();
    let (lib, _) = common::random_library_of(12, &[1, 40]);
    let n = 300;
    let make = |layers: bool, fused: bool| {
        let desc = AnimatorDesc::default()
            .with_max_instances(n as u32)
            .with_layers(layers)
            .with_inertialization(layers)
            // The palette's features too: dual quaternions kept, culling with update-rate
            // LOD interpolating (no view: every character seen, at rate 1).
            .with_dual_quaternion(layers)
            .with_culling(layers)
            .with_lod_interpolation(layers);
        random_crowd(&device, &lib, &desc, fused, 41)
    };
    for fused in [false, true] {
        let (mut with, mut without) = (make(true, fused), make(false, fused));
        assert!(with.controller().layers() && !without.controller().layers());
        let mut r = common::rng(42);
        for (f, dt) in [0.0, 0.1, 0.05, 0.2, 0.016].into_iter().enumerate() {
            if f == 2 || f == 3 {
                for i in 0..n {
                    if r.gen_range(0..3) == 0 {
                        let skel = with.controller().instance(i).unwrap().skeleton;
                        let desc = common::random_state(&mut r, &lib, skel);
                        let t = Transition::linear(r.gen_range(0.2..0.8));
                        with.controller_mut().play(i, &desc, Some(t)).unwrap();
                        without.controller_mut().play(i, &desc, Some(t)).unwrap();
                    }
                }
            }
            let frames = frame_of_each(&device, &queue, [&mut with, &mut without], dt);
            let ((wc, wp), (oc, op)) = (&frames[0], &frames[1]);
            assert_eq!(wc, oc, "fused {fused}, frame {f}: clocks differ");
            common::compare("palette", &op.palette, &wp.palette, 1e-6, common::affine_error)
                .unwrap_or_else(|e| panic!("fused {fused}, frame {f}: {e}"));
        }
        let skel = without.controller().instance(0).unwrap().skeleton;
        let layer = match common::random_state(&mut r, &lib, skel) {
            wgpu_anim::InstanceDesc { tree: Some(t), .. } => Layer::tree(LayerMode::Override, t),
            d => Layer::clip(LayerMode::Override, d.clip),
        };
        assert!(with.controller_mut().set_layer(0, 1, Some(&layer), false).is_ok());
        let refused = without
            .controller_mut()
            .set_layer(0, 1, Some(&layer), false)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("instance 0") && refused.contains("AnimatorDesc::layers"),
            "{refused}"
        );
        without.controller_mut().set_layer(0, 1, None, false).unwrap();
        let desc = common::random_state(&mut r, &lib, skel);
        assert!(
            without
                .controller_mut()
                .play(0, &desc, Some(Transition::inertialize(0.3)))
                .is_err()
        );
    }
}

/// An animator without layers keeps no mesh-space deltas: its local pose buffer is half that of
/// one with layers, its pose history (snapshots and the velocities of inertialized transitions)
/// the same, and it computes what an animator with layers computes, velocities included, on both
/// paths.
#[test]
fn without_layers_the_local_poses_keep_no_deltas_and_inertialize_the_same() {
    use rand::Rng;
    use wgpu_anim::gpu::Transition;
    use wgpu_anim::shaders::Resource;
    use wgpu_anim::{Animator, AnimatorDesc};
    let (device, queue) = common::device();
    let (lib, _) = common::random_library_of(13, &[1, 40]);
    let n = 200;
    let make = |layers: bool, fused: bool| {
        let desc = AnimatorDesc::default()
            .with_max_instances(n as u32)
            .with_layers(layers)
            .with_inertialization(true);
        random_crowd(&device, &lib, &desc, fused, 43)
    };
    for fused in [false, true] {
        let (mut with, mut without) = (make(true, fused), make(false, fused));
        let size = |a: &Animator, r: Resource| a.page_buffer(0, r).unwrap().size();
        let local = Resource::LocalPoses;
        assert_eq!(size(&without, local) * 2, size(&with, local), "one section against two");
        let history = Resource::PoseHistory;
        assert_eq!(size(&without, history), size(&with, history), "the same history");
        let mut r = common::rng(44);
        for f in 0..8 {
            if (1..=4).contains(&f) {
                for i in 0..n {
                    if r.gen_range(0..3) == 0 {
                        let skel = with.controller().instance(i).unwrap().skeleton;
                        let desc = common::random_state(&mut r, &lib, skel);
                        let duration = r.gen_range(0.1..0.5);
                        let t = match r.gen_range(0..3) {
                            0 => Transition::inertialize(duration),
                            1 => Transition::dead_blend(duration),
                            _ => Transition::linear(duration),
                        };
                        with.controller_mut().play(i, &desc, Some(t)).unwrap();
                        without.controller_mut().play(i, &desc, Some(t)).unwrap();
                    }
                }
            }
            let frames = frame_of_each(&device, &queue, [&mut with, &mut without], 1.0 / 60.0);
            let ((wc, wp), (oc, op)) = (&frames[0], &frames[1]);
            assert_eq!(wc, oc, "fused {fused}, frame {f}: clocks differ");
            common::compare("palette", &op.palette, &wp.palette, 1e-6, common::affine_error)
                .unwrap_or_else(|e| panic!("fused {fused}, frame {f}: {e}"));
            // The kept poses and velocities, each in its own section.
            for region in [1, 3] {
                let kept = |a: &Animator| a.read_local_region(&device, &queue, region).unwrap();
                common::compare("kept", &kept(&without), &kept(&with), 1e-6, common::pose_error)
                    .unwrap_or_else(|e| panic!("fused {fused}, frame {f}, region {region}: {e}"));
            }
        }
        assert!(
            without.read_local_region(&device, &queue, 2).is_err(),
            "no deltas to read"
        );
    }
}

/// An animator made from `desc` (on the fused path if `fused`) with `desc.max_instances` characters
/// in random states of skeletons 0 and 1 of `lib`, each at a random time and rate.
fn random_crowd(
    device: &wgpu::Device,
    lib: &AnimationLibrary,
    desc: &wgpu_anim::AnimatorDesc,
    fused: bool,
    seed: u64,
) -> wgpu_anim::Animator {
    use rand::Rng;
    let mut a = wgpu_anim::Animator::new(device, lib, desc).unwrap();
    a.set_fused(fused).unwrap();
    let mut r = common::rng(seed);
    for _ in 0..desc.max_instances {
        let skeleton = r.gen_range(0..2);
        let state = {
            // The fields drawn before the state, as they were.
            let (time, rate) = (r.gen_range(0.0..2.0), r.gen_range(-1.5..1.5));
            common::random_state(&mut r, lib, skeleton)
                .with_time(time)
                .with_rate(rate)
        };
        a.controller_mut().add_instance(&state).unwrap();
    }
    a
}

/// One frame of `dt` seconds of each animator, their clocks and poses read back.
fn frame_of_each(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    animators: [&mut wgpu_anim::Animator; 2],
    dt: f32,
) -> Vec<(Vec<wgpu_anim::layout::GpuClock>, cpu::Pose)> {
    animators
        .into_iter()
        .map(|a| {
            a.prepare(queue, dt);
            let mut e = device.create_command_encoder(&Default::default());
            a.encode(&mut e).unwrap();
            queue.submit([e.finish()]);
            a.read_back(device, queue).unwrap()
        })
        .collect()
}
