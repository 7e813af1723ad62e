//! Accepted means within reach (`wgpu_anim::reach`): every input that could make a pose, a
//! skinning matrix, a socket or a skinned vertex overflow — each value finite, their products
//! not — is refused with an error naming what and where, and nothing is half-added; real assets
//! and ordinary inputs are accepted and every pose they give is within reach.

use glam::{Mat4, Quat, Vec3};
use std::sync::Arc;
use wgpu_anim::gpu::{Controller, Layer, LayerMode};
use wgpu_anim::reach::MAX_REACH;
use wgpu_anim::{
    Clip, InstanceDesc, Interpolation, JointDesc, JointTrack, LibraryBuilder, Skeleton, SkinnedMesh, Track, Transform,
};

/// A chain of `n` joints, each 0.1 above its parent, inverse binds from the rest pose.
fn chain(n: usize, root_scale: f32) -> Skeleton {
    let joints = (0..n)
        .map(|j| {
            let rest = Transform {
                translation: Vec3::new(0.0, if j == 0 { 0.0 } else { 0.1 }, 0.0),
                rotation: Quat::IDENTITY,
                scale: Vec3::splat(if j == 0 { root_scale } else { 1.0 }),
            };
            (format!("j{j}"), j.checked_sub(1), rest)
        })
        .collect();
    Skeleton::from_rest_pose("chain", joints).unwrap()
}

/// A clip of one second moving joint `joint`: translation and scale keys.
fn clip(name: &str, joint: &str, translation: Vec3, scale: Vec3) -> Clip {
    let track = |v: Vec3| {
        Some(Track {
            interpolation: Interpolation::Linear,
            times: vec![0.0, 1.0],
            values: vec![Vec3::ZERO, v],
        })
    };
    Clip {
        morph_weights: Vec::new(),
        name: name.into(),
        duration: 1.0,
        looping: true,
        tracks: vec![JointTrack {
            joint: joint.into(),
            translation: track(translation),
            rotation: None,
            scale: Some(Track {
                interpolation: Interpolation::Linear,
                times: vec![0.0, 1.0],
                values: vec![Vec3::ONE, scale],
            }),
        }],
        events: Vec::new(),
        curves: Vec::new(),
    }
}

#[test]
fn a_clip_that_would_reach_too_far_is_refused_by_name_and_nothing_is_added() {
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(chain(4, 1.0));
    b.add_clip(s, &clip("walk", "j1", Vec3::new(0.0, 2.0, 0.0), Vec3::ONE))
        .unwrap();
    // A key translation of 1e20 (finite) under an ordinary skeleton.
    let e = b
        .add_clip(s, &clip("far", "j2", Vec3::new(1e20, 0.0, 0.0), Vec3::ONE))
        .unwrap_err()
        .to_string();
    assert!(e.contains("far") && e.contains("j2") && e.contains("position"), "{e}");
    // Scales of 1e4 on three joints: each fine alone, 1e12 together down the chain (and √3
    // times that for the last joint's skinning matrix).
    let mut tracks = Vec::new();
    for j in 1..4 {
        tracks.extend(clip("grow", &format!("j{j}"), Vec3::ZERO, Vec3::splat(1e4)).tracks);
    }
    let grow = Clip {
        tracks,
        ..clip("grow", "j1", Vec3::ZERO, Vec3::ONE)
    };
    let e = b.add_clip(s, &grow).unwrap_err().to_string();
    assert!(e.contains("grow") && e.contains("j3"), "{e}");
    let lib = b.build();
    assert_eq!(lib.clip_names(), ["walk"], "refused clips left nothing behind");
}

#[test]
fn a_rest_pose_inverse_bind_or_socket_that_would_overflow_is_refused() {
    // Fourteen joints each scaled by 10 in the rest pose: 1e14 at the end of the chain.
    let joints: Vec<JointDesc> = (0..14usize)
        .map(|j| JointDesc {
            name: format!("j{j}"),
            parent: j.checked_sub(1),
            rest: Transform {
                scale: Vec3::splat(10.0),
                ..Transform::IDENTITY
            },
            inverse_bind: Mat4::IDENTITY,
        })
        .collect();
    let e = Skeleton::new("tall", joints).unwrap_err().to_string();
    assert!(e.contains("tall") && e.contains("j11"), "{e}");
    // One inverse-bind element near f32::MAX: the skinning matrix would overflow.
    let mut bind = Mat4::IDENTITY;
    bind.w_axis.x = 3.0e38;
    let joints = vec![JointDesc {
        name: "root".into(),
        parent: None,
        rest: Transform::IDENTITY,
        inverse_bind: bind,
    }];
    let e = Skeleton::new("bind", joints).unwrap_err().to_string();
    assert!(e.contains("root") && e.contains("skinning matrix"), "{e}");
    // A socket 1e20 away.
    let mut s = chain(3, 1.0);
    let offset = Transform {
        translation: Vec3::new(0.0, 1e20, 0.0),
        ..Transform::IDENTITY
    };
    let e = s.add_socket("hand", "j2", offset).unwrap_err().to_string();
    assert!(e.contains("hand") && e.contains("j2"), "{e}");
    assert!(s.sockets().is_empty(), "a refused socket is not kept");
    assert!(s.add_socket("hand", "j2", Transform::IDENTITY).is_ok());
}

#[test]
fn a_scene_a_million_times_a_human_is_accepted() {
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(chain(40, 1e6));
    b.add_clip(s, &clip("walk", "j5", Vec3::new(0.3, 0.1, 0.0), Vec3::splat(1.2)))
        .unwrap();
    let lib = b.build();
    let pose = wgpu_anim::cpu::pose_at(&lib, lib.clip_at(0).unwrap(), 0.5).unwrap();
    assert_eq!(pose.beyond_reach(), None);
}

#[test]
fn additive_layers_that_would_compound_past_reach_are_refused_and_change_nothing() {
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(chain(3, 1.0));
    b.add_clip(s, &clip("idle", "j1", Vec3::ZERO, Vec3::ONE)).unwrap();
    // A clip scaling the root by 1e4: fine played alone or as one additive layer, 1e12 as three.
    let big = b.add_clip(s, &clip("big", "j0", Vec3::ZERO, Vec3::splat(1e4))).unwrap();
    let lib = Arc::new(b.build());
    let mut c = Controller::new(lib.clone(), 1, &[(1, 64)]).unwrap();
    c.add_instance(&InstanceDesc::new(lib.clip_at(0).unwrap())).unwrap();
    let layer = Layer::clip(LayerMode::AdditiveLocal, big).with_weight(1.0);
    c.set_layer(0, 0, Some(&layer), false).unwrap();
    let before = *c.instance(0).unwrap();
    let e = c.set_layer(0, 1, Some(&layer), false).unwrap_err().to_string();
    assert!(e.contains("additive layer 1") && e.contains("j0"), "{e}");
    assert_eq!(
        *c.instance(0).unwrap(),
        before,
        "the refused layer changed the instance"
    );
    // An override layer of the same clip blends convexly: accepted.
    let over = Layer::clip(LayerMode::Override, big).with_weight(1.0);
    c.set_layer(0, 1, Some(&over), false).unwrap();
}

#[test]
fn world_matrices_and_mesh_positions_beyond_reach_are_refused() {
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(chain(2, 1.0));
    // The root may move 9e11 away.
    b.add_clip(s, &clip("run", "j0", Vec3::new(9e11, 0.0, 0.0), Vec3::ONE))
        .unwrap();
    let lib = Arc::new(b.build());
    let mut c = Controller::new(lib.clone(), 2, &[(2, 64)]).unwrap();
    let far = Mat4::from_translation(Vec3::new(2.0 * MAX_REACH as f32, 0.0, 0.0));
    let e = c
        .add_instance(&InstanceDesc::new(lib.clip_at(0).unwrap()).with_world(far))
        .unwrap_err()
        .to_string();
    assert!(e.contains("world matrix"), "{e}");
    c.add_instance(&InstanceDesc::new(lib.clip_at(0).unwrap())).unwrap();
    assert!(c.set_world(0, far).is_err());
    assert_eq!(c.instances().len(), 1);

    let mesh = |x: f32| {
        let mut m = SkinnedMesh {
            morph_targets: Default::default(),
            name: "blob".into(),
            positions: vec![Vec3::ZERO, Vec3::new(x, 0.0, 0.0), Vec3::Y],
            normals: Vec::new(),
            uvs: Vec::new(),
            joints: vec![[0, 0, 0, 0]; 3],
            weights: vec![[1.0, 0.0, 0.0, 0.0]; 3],
            indices: vec![0, 1, 2],
        };
        m.validate(2).map(|()| m)
    };
    let e = mesh(1e20).unwrap_err().to_string();
    assert!(e.contains("blob") && e.contains("vertex 1"), "{e}");
    // Within reach as a position, but 9e11 of root motion plus 5e11 reaches 1.4e12.
    let e = lib
        .check_mesh(lib.skeleton_at(0).unwrap(), &mesh(5e11).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("blob") && e.contains("vertex 1"), "{e}");
    lib.check_mesh(lib.skeleton_at(0).unwrap(), &mesh(1.0).unwrap())
        .unwrap();
}

#[test]
fn a_gltf_whose_joint_sits_beyond_reach_is_refused_naming_the_file_and_joint() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/simple_skin/simple_skin.gltf");
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    // A chain of joints each scaled by 1e7: finite values, a product of 1e14 and more.
    let joints: Vec<u64> = doc["skins"][0]["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j.as_u64().unwrap())
        .collect();
    for j in &joints {
        doc["nodes"][*j as usize]["scale"] = serde_json::json!([1e7, 1e7, 1e7]);
    }
    let bytes = serde_json::to_vec(&doc).unwrap();
    let folder = std::path::Path::new(path).parent().unwrap();
    let e = wgpu_anim::offline::gltf_import::load_slice(&bytes, "huge.gltf", Some(folder));
    let e = match e {
        Err(e) => e.to_string(),
        Ok(imported) => imported.build_library().map(|_| ()).unwrap_err().to_string(),
    };
    assert!(e.contains("huge.gltf") && e.contains("reach"), "{e}");
}

#[test]
fn every_real_asset_is_accepted_and_every_pose_it_gives_is_within_reach() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/");
    for file in [
        "Fox/Fox.gltf",
        "cmu/cmu_01_03.glb",
        "InterpolationTest/InterpolationTest.gltf",
        "simple_skin/simple_skin.gltf",
        "AnimatedMorphCube/AnimatedMorphCube.gltf",
    ] {
        let imported = wgpu_anim::offline::gltf_import::load(std::path::Path::new(&format!("{root}{file}"))).unwrap();
        let library = imported.build_library().unwrap();
        imported.check_poses(&library, 5).unwrap();
    }
    let (lib, _, clips) = wgpu_anim::mannequin::library();
    for clip in clips {
        for t in [0.0, 0.4, 0.9] {
            assert_eq!(wgpu_anim::cpu::pose_at(&lib, clip, t).unwrap().beyond_reach(), None);
        }
    }
}

#[test]
fn extreme_rates_times_parameters_and_weights_still_give_poses_within_reach() {
    use wgpu_anim::layout::{BlendList, GpuClock, GpuFrame, MAX_BLEND_CLIPS, SNAPSHOT_CLIP};
    let (lib, _, clips) = wgpu_anim::mannequin::library();
    let lib = Arc::new(lib);
    let mut c = Controller::new(lib.clone(), 6, &[(6, 6 * 64)]).unwrap();
    let huge = 3.0e38f32;
    for (k, (rate, time)) in [(huge, huge), (-huge, -huge), (huge, -huge), (1.0, huge)]
        .into_iter()
        .enumerate()
    {
        c.add_instance(
            &InstanceDesc::new(clips[k % clips.len()])
                .with_rate(rate)
                .with_time(time),
        )
        .unwrap();
    }
    // A blend tree driven by parameters far outside its blend space.
    let tree = lib.blend().tree_at(0).unwrap();
    let desc = InstanceDesc::new(clips[0])
        .with_tree(Some(tree))
        .with_params([huge, -huge, huge, -huge])
        .with_rate(huge);
    c.add_instance(&desc).unwrap();
    // Layers at an absurd weight (clamped to 1) and rate.
    let layer = Layer::clip(LayerMode::AdditiveLocal, clips[1])
        .with_weight(huge)
        .with_rate(huge);
    c.set_layer(0, 0, Some(&layer), false).unwrap();
    c.set_layer(0, 1, Some(&layer.with_mode(LayerMode::Override)), false)
        .unwrap();
    let n = c.instance_count();
    let (mut clocks, mut lists) = (vec![GpuClock::default(); n], vec![BlendList::default(); n]);
    let mut instances = c.instances().to_vec();
    for dt in [1.0 / 60.0, huge, -huge, 1.0 / 60.0] {
        let _ = c.begin_frame(dt);
        let frame = GpuFrame {
            dt,
            instance_count: n as u32,
            ..Default::default()
        };
        let mut page = wgpu_anim::cpu::PageBuffers::new(&frame, &mut instances)
            .layer_defs(c.layer_defs())
            .clocks(&mut clocks)
            .blend_lists(&mut lists);
        wgpu_anim::cpu::clock(&lib, &mut page).unwrap();
        for (k, (inst, list)) in instances.iter().zip(&lists).enumerate() {
            let count = list.count.min(MAX_BLEND_CLIPS) as usize;
            assert!(list.samples[..count].iter().all(|s| s.clip != SNAPSHOT_CLIP));
            // Alone, at joint 0.
            let alone = wgpu_anim::layout::GpuInstance {
                joint_offset: 0,
                ..*inst
            };
            let pose = wgpu_anim::cpu::evaluate(&lib, &[alone], &[*list]).unwrap();
            assert_eq!(pose.beyond_reach(), None, "instance {k} after a frame of {dt} s");
        }
    }
}

#[test]
fn rotation_keys_of_any_finite_length_are_normalized_and_wild_tangents_refused() {
    // A rotation key whose components are near f32::MAX: its f32 length overflows, its f64
    // length does not; the builder normalizes it in f64 (the builder fuzz target found the NaN
    // the f32 length made).
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(chain(2, 1.0));
    let big = -f32::MAX;
    let rotation = |interpolation, values| {
        let times = vec![0.0, 1.0];
        Clip {
            tracks: vec![JointTrack {
                joint: "j0".into(),
                translation: None,
                rotation: Some(Track {
                    interpolation,
                    times,
                    values,
                }),
                scale: None,
            }],
            ..clip("turn", "j1", Vec3::ZERO, Vec3::ONE)
        }
    };
    let huge = rotation(
        Interpolation::Linear,
        vec![Quat::from_xyzw(big, big, 0.0, big), Quat::IDENTITY],
    );
    let id = b.add_clip(s, &huge).unwrap();
    let lib = b.build();
    for t in [0.0, 0.5, 1.0] {
        assert_eq!(
            wgpu_anim::cpu::pose_at(&lib, id, t).unwrap().beyond_reach(),
            None,
            "at {t} s"
        );
    }
    // A cubic rotation whose tangents over its span would add 1e30 before normalizing.
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(chain(2, 1.0));
    let wild = Quat::from_xyzw(1e30, 0.0, 0.0, 0.0);
    let cubic = rotation(
        Interpolation::CubicSpline,
        vec![
            Quat::IDENTITY,
            Quat::IDENTITY,
            wild,
            wild,
            Quat::IDENTITY,
            Quat::IDENTITY,
        ],
    );
    let e = b.add_clip(s, &cubic).unwrap_err().to_string();
    assert!(e.contains("turn") && e.contains("tangents"), "{e}");
}

#[test]
fn a_cubic_rotation_through_zero_takes_its_keys_interpolation_on_the_gpu_and_the_cpu() {
    // Two identity keys a second apart whose tangents (-4 out of the first, 4 into the second)
    // cancel them at 0.5 s: the spline passes through the zero quaternion, which has no
    // direction (the builder fuzz target found the NaN it made).
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(chain(2, 1.0));
    let (id, w) = (Quat::IDENTITY, |x: f32| Quat::from_xyzw(0.0, 0.0, 0.0, x));
    let clip = Clip {
        tracks: vec![JointTrack {
            joint: "j0".into(),
            translation: None,
            rotation: Some(Track {
                interpolation: Interpolation::CubicSpline,
                times: vec![0.0, 1.0],
                values: vec![w(0.0), id, w(-4.0), w(4.0), id, w(0.0)],
            }),
            scale: None,
        }],
        ..clip("through zero", "j1", Vec3::ZERO, Vec3::ONE)
    };
    let clip = b.add_clip(s, &clip).unwrap();
    let lib = b.build();
    let cpu = wgpu_anim::cpu::pose_at(&lib, clip, 0.5).unwrap();
    assert_eq!(cpu.beyond_reach(), None);
    // The keys' own interpolation: the identity.
    let rotation = cpu.local[0].rotation;
    assert!((rotation - glam::Vec4::W).length() < 1e-6, "{rotation}");
    let (device, queue) = wgpu_anim::gpu::headless_device_with_limits(wgpu::Limits::default()).unwrap();
    let gpu = wgpu_anim::testing::evaluate_poses(&device, &queue, &lib, &[(clip, 0.5)]).unwrap();
    assert_eq!(gpu[0].beyond_reach(), None);
    assert!(
        (gpu[0].local[0].rotation - rotation).length() < 1e-6,
        "{:?}",
        gpu[0].local[0]
    );
}
