//! Morph targets: sparse storage, per-character weights, the skinning module's `wgpu_anim_morph`
//! on the GPU against its CPU mirror (`cpu::morph`) and the f64 reference, and bad input.
//!
//! Tolerances: the GPU against the mirror 1e-5 relative to 1 + |value| (the same operations in
//! the same order; FMA contraction may differ by an ulp); the GPU against the f64 reference
//! (morph, then skin with the GPU's own palette in f64) 1e-5 × the mesh's extent.

mod common;

use glam::{DMat4, Vec3, Vec4};
use rand::Rng;
use wgpu_anim::gpu::{GpuMorphTargets, SkinBinding, Skinning};
use wgpu_anim::testing::{skin_on_gpu, skin_on_gpu_morphed};
use wgpu_anim::{
    Animator, AnimatorDesc, InstanceDesc, MorphDelta, MorphTarget, MorphTargets, SkinnedMesh, cpu, mannequin, reference,
};

/// Targets on the mannequin's mesh: each moves a random 5 % of its vertices.
fn random_targets(mesh: &SkinnedMesh, count: usize, seed: u64) -> MorphTargets {
    let mut r = common::rng(seed);
    let n = mesh.positions.len();
    let v3 =
        |r: &mut rand::rngs::SmallRng, s: f32| Vec3::new(r.gen_range(-s..s), r.gen_range(-s..s), r.gen_range(-s..s));
    let targets = (0..count)
        .map(|t| {
            let mut vertices: Vec<u32> = (0..n as u32).filter(|_| r.gen_bool(0.05)).collect();
            vertices.dedup();
            MorphTarget {
                name: format!("target_{t}"),
                deltas: vertices
                    .into_iter()
                    .map(|vertex| MorphDelta {
                        vertex,
                        position: v3(&mut r, 0.05),
                        normal: v3(&mut r, 0.3),
                        tangent: Vec3::ZERO,
                    })
                    .collect(),
            }
        })
        .collect();
    MorphTargets {
        mesh: mesh.name.clone(),
        targets,
        default_weights: Vec::new(),
    }
}

/// Within 1e-5 relative to 1 + |b|.
fn close(a: Vec4, b: Vec4) -> bool {
    (a - b).abs().max_element() <= 1e-5 * (1.0 + b.abs().max_element())
}

const TARGETS: usize = 300;

#[test]
fn the_gpu_morphs_then_skins_as_the_mirror_and_the_f64_reference_do() {
    let (device, queue) = common::device();
    let (lib, _, clips) = mannequin::library();
    let mut mesh = mannequin::mesh(&mannequin::skeleton());
    mesh.validate(lib.gpu_skeletons()[0].joint_count as usize).unwrap();
    let targets = random_targets(&mesh, TARGETS, 7);
    let set = targets.build(mesh.positions.len()).unwrap();
    let gpu_targets = GpuMorphTargets::new(&device, &set).unwrap();
    let desc = AnimatorDesc::default()
        .with_dual_quaternion(true)
        .with_morph_weights(TARGETS as u32);
    let mut animator = Animator::new(&device, &lib, &desc).unwrap();
    let mut r = common::rng(3);
    // Instance 0: a few targets up to the last one; 1: none; 2: dual quaternions and weights,
    // negative and above 1 among them; 3: weights set, then all set back to 0.
    let mut weights = vec![Vec::new(); 4];
    for (i, skinning) in [
        Skinning::Linear,
        Skinning::Linear,
        Skinning::DualQuaternion,
        Skinning::Linear,
    ]
    .into_iter()
    .enumerate()
    {
        animator
            .controller_mut()
            .add_instance(
                &InstanceDesc::new(clips[1 + i % 2])
                    .with_time(0.1 * i as f32)
                    .with_skinning(skinning),
            )
            .unwrap();
        if i != 1 {
            let mut w = vec![0.0f32; TARGETS];
            for _ in 0..20 {
                w[r.gen_range(0..TARGETS)] = r.gen_range(-0.5..1.5);
            }
            w[TARGETS - 1] = 0.75;
            animator.controller_mut().set_morph_weights(i, &w).unwrap();
            weights[i] = w;
        }
    }
    animator.controller_mut().set_morph_weights(3, &[0.0; 4]).unwrap();
    weights[3].clear();
    assert_eq!(animator.controller().instances()[0].morph_count, TARGETS as u32);
    assert_eq!(animator.controller().instances()[3].morph_count, 0);
    animator.prepare(&queue, 1.0 / 60.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);
    let (_, pose) = animator.read_back(&device, &queue).unwrap();
    let vertices = mesh.gpu_vertices();
    let extent = {
        let (lo, hi) = mesh.bounds();
        (hi - lo).max_element()
    };
    let mut checked = 0;
    for (i, inst) in animator.controller().instances().to_vec().iter().enumerate() {
        let in_use = &weights[i][..inst.morph_count as usize];
        let gpu = skin_on_gpu_morphed(&device, &queue, &animator, i, &gpu_targets, &vertices).unwrap();
        let amount = inst.dual_quaternion;
        let cpu = cpu::skin_morphed(
            &pose.palette,
            &pose.dual,
            inst.joint_offset,
            amount,
            set.words(),
            in_use,
            &vertices,
        )
        .unwrap();
        for (v, (g, c)) in gpu.iter().zip(&cpu).enumerate() {
            assert!(
                close(g.position, c.position) && close(g.normal, c.normal),
                "instance {i}, vertex {v}: GPU {g:?}, mirror {c:?}"
            );
        }
        // Vertices no weighted target moves skin exactly as without morphing.
        let plain = skin_on_gpu(&device, &queue, &animator, inst.joint_offset, &vertices).unwrap();
        let moved: Vec<bool> = (0..vertices.len())
            .map(|v| {
                targets
                    .targets
                    .iter()
                    .zip(in_use)
                    .any(|(t, &w)| w != 0.0 && t.deltas.iter().any(|d| d.vertex as usize == v))
            })
            .collect();
        if amount == 0.0 {
            for v in (0..vertices.len()).filter(|&v| !moved[v]) {
                assert_eq!(gpu[v], plain[v], "instance {i}, vertex {v} moved without a target");
            }
        }
        let differs = (0..vertices.len())
            .filter(|&v| gpu[v].position != plain[v].position)
            .count();
        assert_eq!(
            differs > 0,
            !in_use.is_empty(),
            "instance {i}: {differs} vertices moved"
        );
        // The f64 reference: morphed from the authoring deltas, skinned by the GPU's palette.
        if amount == 0.0 {
            let palette: Vec<DMat4> = pose.palette
                [inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize]
                .iter()
                .map(|a| a.to_mat4().as_dmat4())
                .collect();
            let w64: Vec<f64> = in_use.iter().map(|&w| f64::from(w)).collect();
            let want = reference::skin_morphed(&mesh, &targets, &w64, &palette);
            for (v, (g, w)) in gpu.iter().zip(&want).enumerate() {
                let err = (g.position.truncate().as_dvec3() - *w).abs().max_element();
                assert!(err <= 1e-5 * f64::from(extent), "instance {i}, vertex {v}: {err}");
            }
            checked += 1;
        }
        // The comparison fails on the wrong buffer: the mirror with another instance's weights.
        if i == 0 {
            let wrong = cpu::skin_morphed(
                &pose.palette,
                &pose.dual,
                inst.joint_offset,
                amount,
                set.words(),
                &weights[2],
                &vertices,
            )
            .unwrap();
            assert!(gpu.iter().zip(&wrong).any(|(g, c)| !close(g.position, c.position)));
        }
    }
    assert_eq!(checked, 3);
}

#[test]
fn a_target_costs_the_vertices_it_moves() {
    let mesh = mannequin::mesh(&mannequin::skeleton());
    let n = mesh.positions.len();
    let one = random_targets(&mesh, 1, 11);
    let mut two = one.clone();
    two.targets.push(random_targets(&mesh, 1, 12).targets.remove(0));
    let (a, b) = (one.build(n).unwrap(), two.build(n).unwrap());
    let moved = two.targets[1].deltas.len() as u64;
    // The second target adds 32 bytes per vertex it moves, nothing per vertex it does not.
    assert_eq!(b.bytes() - a.bytes(), moved * 32);
    assert!(moved * 10 < n as u64, "{moved} of {n}");
    // 64 targets of 5 % each: about 5 % of a dense layout (plus 8 bytes per vertex of ranges).
    let many = random_targets(&mesh, 64, 13).build(n).unwrap();
    let ratio = many.bytes() as f64 / many.dense_bytes() as f64;
    assert!((0.04..0.07).contains(&ratio), "{ratio}");
}

#[test]
fn bad_weights_and_missing_room_are_errors_naming_the_instance() {
    let (device, _queue) = common::device();
    let (lib, _, clips) = mannequin::library();
    let mut plain = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    plain
        .controller_mut()
        .add_instance(&InstanceDesc::new(clips[0]))
        .unwrap();
    let e = plain
        .controller_mut()
        .set_morph_weights(0, &[1.0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("instance 0") && e.contains("morph_weights"), "{e}");
    let desc = AnimatorDesc::default().with_morph_weights(4);
    let mut animator = Animator::new(&device, &lib, &desc).unwrap();
    animator
        .controller_mut()
        .add_instance(&InstanceDesc::new(clips[0]))
        .unwrap();
    let c = animator.controller_mut();
    assert!(
        c.set_morph_weights(0, &[0.0; 5])
            .unwrap_err()
            .to_string()
            .contains("room for 4")
    );
    let e = c.set_morph_weights(0, &[0.0, f32::NAN]).unwrap_err().to_string();
    assert!(e.contains("morph weight 1") && e.contains("NaN"), "{e}");
    assert!(c.set_morph_weights(0, &[2e3]).is_err());
    assert!(
        c.set_morph_weights(1, &[0.5])
            .unwrap_err()
            .to_string()
            .contains("instance 1")
    );
    // Nothing changed by the refusals.
    assert_eq!(c.morph_weights(0), Some(&[0.0; 4][..]));
    c.set_morph_weights(0, &[0.0, 0.5]).unwrap();
    assert_eq!(c.morph_weights(0), Some(&[0.0, 0.5, 0.0, 0.0][..]));
    assert_eq!(animator.controller().instances()[0].morph_count, 2);
    // A morphing bind group needs the mesh's targets, and an animator with room for weights.
    let binding = SkinBinding::default().with_morph(true);
    let layout = binding.bind_group_layout(&device).unwrap();
    let e = binding
        .bind_group(&device, &layout, &animator, 0, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("morph_bind_group"), "{e}");
    let mesh = mannequin::mesh(&mannequin::skeleton());
    let set = random_targets(&mesh, 2, 1).build(mesh.positions.len()).unwrap();
    let targets = GpuMorphTargets::new(&device, &set).unwrap();
    binding
        .morph_bind_group(&device, &layout, &animator, 0, &targets, &[])
        .unwrap();
    let e = binding
        .morph_bind_group(&device, &layout, &plain, 0, &targets, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("keeps no morph weights"), "{e}");
}

/// The glTF sample AnimatedMorphCube: its two targets imported (sparse: only the vertices they
/// move), its weight channel as the clip's weight tracks; its animation played on the GPU, which
/// blends the weights, morphs and skins the cube, at the times three.js computed
/// (`tests/fixtures/morph/morph_cube.json`): against the f64 reference within 1e-5 × its extent,
/// against three.js within 1e-4 × its extent.
#[test]
fn animated_morph_cube_morphs_on_the_gpu_as_its_animation_says() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/AnimatedMorphCube/AnimatedMorphCube.gltf");
    let imported = wgpu_anim::offline::gltf_import::load(&path).unwrap();
    let m = &imported.meshes[0];
    let targets = &m.mesh.morph_targets;
    assert_eq!(targets.targets.len(), 2);
    let n = m.mesh.positions.len();
    assert!(
        targets
            .targets
            .iter()
            .all(|t| !t.deltas.is_empty() && t.deltas.len() < n)
    );
    let set = targets.build(n).unwrap();
    let clip = &imported.skeletons[m.skeleton].clips[0].clip;
    assert_eq!(clip.morph_weights.len(), 2);
    let built = imported.build_library().unwrap();
    let (lib, clip_id) = (built.library, built.clips[m.skeleton][0]);
    let (device, queue) = common::device();
    let gpu_targets = GpuMorphTargets::new(&device, &set).unwrap();
    let desc = AnimatorDesc::default().with_morph_weights(2);
    let mut animator = Animator::new(&device, &lib, &desc).unwrap();
    let extent = {
        let (lo, hi) = m.mesh.bounds();
        f64::from((hi - lo).max_element())
    };
    let vertices = m.mesh.gpu_vertices();
    let mut moved = 0.0f64;
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/morph/morph_cube.json");
    let fixture: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 5);
    for case in cases {
        let t = case["time"].as_f64().unwrap() as f32;
        animator.controller_mut().truncate(0);
        animator
            .controller_mut()
            .add_instance(&InstanceDesc::new(clip_id).with_time(t).with_rate(0.0))
            .unwrap();
        // The weights come from the clip, on the GPU: the instance sets none of its own.
        let w64: Vec<f64> = clip
            .morph_weights
            .iter()
            .map(|track| reference::sample_scalar(track, f64::from(t)))
            .collect();
        animator.prepare(&queue, 0.0);
        let mut encoder = device.create_command_encoder(&Default::default());
        animator.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let (_, pose) = animator.read_back(&device, &queue).unwrap();
        let gpu = skin_on_gpu_morphed(&device, &queue, &animator, 0, &gpu_targets, &vertices).unwrap();
        let skeleton = &imported.skeletons[m.skeleton].skeleton;
        let local = reference::sample(skeleton, clip, f64::from(t));
        let palette = reference::palette(skeleton, &reference::local_to_model(skeleton, &local));
        let want = reference::skin_morphed(&m.mesh, targets, &w64, &palette);
        let rest = reference::skin(&m.mesh, &palette);
        for (v, (g, want)) in gpu.iter().zip(&want).enumerate() {
            let err = (g.position.truncate().as_dvec3() - *want).abs().max_element();
            assert!(err <= 1e-5 * extent, "t {t}, vertex {v}: GPU {g:?}, reference {want}");
            moved = moved.max((*want - rest[v]).length());
            let three: Vec<f64> = case["positions"][v]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            let err = (g.position.truncate().as_dvec3() - glam::DVec3::from_slice(&three))
                .abs()
                .max_element();
            assert!(err <= 1e-4 * extent, "t {t}, vertex {v}: GPU {g:?}, three.js {three:?}");
        }
        assert!(!pose.palette.is_empty());
    }
    // The animation moves the cube's faces (the weights reach 1 during the clip).
    assert!(moved > 0.1 * extent, "{moved}");
}

/// The mannequin's library with two clips that drive morph weights: "smile" (target 0 linear,
/// target 1 not driven, target 2 cubic) and "blink" (target 1 step, target 3 linear); and a mask
/// over every joint that weighs targets 1 by 0 and 3 by 0.5.
fn driving_library() -> (wgpu_anim::AnimationLibrary, Vec<wgpu_anim::ClipId>, wgpu_anim::MaskId) {
    use wgpu_anim::{Interpolation, Track};
    let skeleton = mannequin::skeleton();
    let mut clips = mannequin::clips(&skeleton);
    let linear = |values: Vec<f32>| Track {
        interpolation: Interpolation::Linear,
        times: (0..values.len()).map(|k| k as f32 * 0.25).collect(),
        values,
    };
    let mut smile = clips[1].clone();
    smile.name = "smile".into();
    smile.morph_weights = vec![
        linear(vec![0.0, 1.0, 0.5, 0.0, 0.2]),
        Track::default(),
        Track {
            interpolation: Interpolation::CubicSpline,
            times: vec![0.0, 0.5],
            values: vec![0.0, 0.1, 2.0, -1.0, 0.9, 0.0],
        },
    ];
    let mut blink = clips[2].clone();
    blink.name = "blink".into();
    blink.morph_weights = vec![
        Track::default(),
        Track {
            interpolation: Interpolation::Step,
            times: vec![0.0, 0.3],
            values: vec![0.25, 1.0],
        },
        Track::default(),
        linear(vec![1.0, 0.0, 1.0]),
    ];
    clips.push(smile);
    clips.push(blink);
    let joints = skeleton.joint_count();
    let mut b = wgpu_anim::LibraryBuilder::new();
    let s = b.add_skeleton(skeleton);
    let ids = clips.iter().map(|c| b.add_clip(s, c).unwrap()).collect();
    let mask = b
        .add_mask_with_targets(s, "face", &vec![1.0; joints], &[1.0, 0.0, 1.0, 0.5])
        .unwrap();
    (b.build(), ids, mask)
}

#[test]
fn clips_drive_morph_weights_on_the_gpu_as_the_mirror_blends_them() {
    use wgpu_anim::gpu::{Layer, LayerMode, Transition};
    let (device, queue) = common::device();
    let (lib, ids, mask) = driving_library();
    let (walk, smile, blink) = (ids[1], ids[ids.len() - 2], ids[ids.len() - 1]);
    assert!(lib.has_morph_weights());
    assert_eq!(lib.morph_targets(0), 4);
    let desc = AnimatorDesc::default().with_morph_weights(6);
    let mut animator = Animator::new(&device, &lib, &desc).unwrap();
    assert!(animator.controller().morph_weights_driven());
    let at = |clip, time: f32| InstanceDesc::new(clip).with_time(time);
    // 0: smile alone, own weights filling the targets it does not drive (1, 3, 5).
    // 1: a cross-fade from smile to blink, half way.
    // 2: walk (no weight tracks) with blink as an override layer at 0.5.
    // 3: smile with blink added.
    // 4: walk alone: its own weights only.
    // 5: walk with blink as an override layer masked over targets (1 by 0, 3 by 0.5).
    // 6: a cross-fade from smile to blink, interrupted by one to walk: the new one blends from
    // the weights shown when it was interrupted (kept as the instance's snapshot).
    for (i, clip) in [smile, smile, walk, smile, walk, walk, smile].into_iter().enumerate() {
        animator
            .controller_mut()
            .add_instance(&at(clip, 0.1 * i as f32))
            .unwrap();
        animator
            .controller_mut()
            .set_morph_weights(i, &[0.3, 0.4, 0.5, 0.7, 0.0, 0.8])
            .unwrap();
    }
    animator
        .controller_mut()
        .play(1, &at(blink, 0.2), Some(Transition::linear(0.2)))
        .unwrap();
    animator
        .controller_mut()
        .set_layer(
            2,
            0,
            Some(&Layer::clip(LayerMode::Override, blink).with_weight(0.5)),
            true,
        )
        .unwrap();
    animator
        .controller_mut()
        .set_layer(3, 0, Some(&Layer::clip(LayerMode::AdditiveLocal, blink)), true)
        .unwrap();
    let masked = Layer::clip(LayerMode::Override, blink).with_mask(Some(mask));
    animator.controller_mut().set_layer(5, 0, Some(&masked), true).unwrap();
    let frame = |animator: &mut Animator, dt: f32| {
        animator.prepare(&queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        animator.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
    };
    animator
        .controller_mut()
        .play(6, &at(blink, 0.0), Some(Transition::linear(1.0)))
        .unwrap();
    let room = 6usize;
    let read = |animator: &Animator, part: usize| -> Vec<f32> {
        let base = part * animator.controller().page_capacity(0) as usize * room;
        let all: Vec<f32> = animator
            .read_page_buffer(
                &device,
                &queue,
                0,
                wgpu_anim::shaders::Resource::MorphWeights,
                0,
                (base + 7 * room) as u64,
            )
            .unwrap();
        all[base..].to_vec()
    };
    frame(&mut animator, 0.1);
    // The interruption: the next frame shows the running cross-fade and keeps what it shows; the
    // one after blends from that.
    animator
        .controller_mut()
        .play(6, &at(walk, 0.0), Some(Transition::linear(1.0)))
        .unwrap();
    frame(&mut animator, 0.0);
    let shown = read(&animator, 0);
    frame(&mut animator, 0.0);
    let snapshots = read(&animator, 2);
    assert_eq!(
        &snapshots[6 * room..7 * room],
        &shown[6 * room..7 * room],
        "the snapshot is what was shown"
    );
    let lists = animator.read_blend_lists(&device, &queue).unwrap();
    assert!(lists[1].count >= 2, "the cross-fade blends two clips");
    assert_eq!(lists[6].samples[0].clip, wgpu_anim::layout::SNAPSHOT_CLIP);
    let mut mirror = Vec::new();
    for (i, inst) in animator.controller().instances().iter().enumerate() {
        assert_eq!(inst.morph_count, 6);
        let own = &animator.controller().morph_weights(i).unwrap()[..inst.morph_count as usize];
        let kept = &snapshots[i * room..i * room + inst.morph_count as usize];
        mirror.push(cpu::blend_morph_weights(&lib, &lists[i], own, kept));
    }
    // The interrupted cross-fade starts from what was shown: no jump in its driven weights.
    for t in 0..room {
        assert!((mirror[6][t] - shown[6 * room + t]).abs() < 1e-6, "target {t}");
    }
    assert!(
        (shown[6 * room] - 0.3).abs() > 1e-3,
        "target 0 was driven when interrupted"
    );
    // Driven targets move off their own weights; walk alone keeps its own.
    assert!((mirror[0][0] - 0.3).abs() > 1e-3 && mirror[0][1] == 0.4 && mirror[0][3] == 0.7);
    assert_eq!(mirror[4], [0.3, 0.4, 0.5, 0.7, 0.0, 0.8]);
    // The mask keeps blink's track of target 1 out (unmasked, instance 2's layer moves it) and
    // lets half of target 3's in: as instance 2's layer at weight 0.5 does.
    assert_eq!(mirror[5][1], 0.4);
    assert!((mirror[2][1] - 0.4).abs() > 1e-3);
    assert!((mirror[5][3] - mirror[2][3]).abs() < 1e-6 && (mirror[5][3] - 0.7).abs() > 1e-3);
    for fused in [false, true] {
        animator.set_fused(fused).unwrap();
        frame(&mut animator, 0.0);
        let gpu = read(&animator, 0);
        for (i, want) in mirror.iter().enumerate() {
            for (t, w) in want.iter().enumerate() {
                let g = gpu[i * room + t];
                assert!(
                    (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
                    "fused {fused}, instance {i}, target {t}: GPU {g}, mirror {w}"
                );
            }
        }
        // The comparison fails on the wrong buffer: instance 0's weights against instance 3's.
        assert!(mirror[3].iter().zip(&gpu[..room]).any(|(w, g)| (g - w).abs() > 1e-3));
        // The stage's mirror over the page's buffers (the weights' section given by its
        // resource) writes the same weights: the section read back, the weights drawn cleared,
        // then `cpu::sample` or `cpu::fused` over the frame's blend lists.
        let mirrored = mirror_stage(&device, &queue, &animator, &lib, fused);
        for (i, g) in gpu.iter().enumerate().take(7 * room) {
            let w = mirrored[i];
            assert!(
                (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
                "fused {fused}, instance {}, target {}: GPU {g}, the stage's mirror {w}",
                i / room,
                i % room
            );
        }
    }
}

/// The weights drawn (the first part of the morph weights' section) after the `sample` stage's
/// mirror (or the `fused` stage's) runs over page 0's buffers as the GPU left them, the weights
/// drawn cleared first.
fn mirror_stage(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    animator: &Animator,
    lib: &wgpu_anim::AnimationLibrary,
    fused: bool,
) -> Vec<f32> {
    use wgpu_anim::shaders::Resource;
    let frame = animator.frame_uniform(0).unwrap();
    let drawn = frame.morph_api_base as usize;
    let mut weights: Vec<f32> = animator
        .read_page_buffer(device, queue, 0, Resource::MorphWeights, 0, 3 * drawn as u64)
        .unwrap();
    weights[..drawn].fill(0.0);
    let mut instances = animator.controller().instances().to_vec();
    let mut lists = animator.read_blend_lists(device, queue).unwrap();
    let joints = frame.snapshot_offset as usize;
    let (mut local, mut history) = (
        vec![wgpu_anim::layout::LocalPose::default(); 2 * joints],
        vec![wgpu_anim::layout::LocalPose::default(); 2 * joints],
    );
    let mut palettes = vec![wgpu_anim::Affine::IDENTITY; joints];
    let mut page = cpu::PageBuffers::new(&frame, &mut instances)
        .blend_lists(&mut lists)
        .local_poses(&mut local)
        .pose_history(&mut history)
        .palettes(&mut palettes)
        .section(Resource::MorphWeights, &mut weights);
    if fused {
        cpu::fused(lib, &mut page).unwrap();
    } else {
        cpu::sample(lib, &mut page).unwrap();
    }
    drop(page);
    // A section too short for the last instance's kept weights is an error naming it.
    let cut = 2 * drawn + instances[6].morph_offset as usize + 3;
    let mut short = weights[..cut].to_vec();
    let mut page = cpu::PageBuffers::new(&frame, &mut instances)
        .blend_lists(&mut lists)
        .local_poses(&mut local)
        .pose_history(&mut history)
        .palettes(&mut palettes)
        .section(Resource::MorphWeights, &mut short);
    let run = if fused { cpu::fused } else { cpu::sample };
    let err = run(lib, &mut page).unwrap_err().to_string();
    assert!(err.contains("instance 6") && err.contains("morph weights"), "{err}");
    weights.truncate(drawn);
    weights
}

/// A skinned and morphed cylinder made for this test (`tests/fixtures/morph/make.mjs`): three
/// targets, one of them a sparse accessor, one with normals, and three animations whose weights
/// are STEP, LINEAR and CUBICSPLINE keys while a joint bends. At every time three.js computed
/// (`SkinnedMesh.getVertexPosition`, an independent implementation of morphing and skinning), the
/// library's import, GPU weight blending, morphing and skinning land every vertex within
/// 1e-4 × the mesh's extent.
#[test]
fn a_skinned_morphed_file_matches_three_js_at_every_time() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/morph");
    let imported = wgpu_anim::offline::gltf_import::load(&dir.join("morph_skin.glb")).unwrap();
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("morph_skin.json")).unwrap()).unwrap();
    let m = &imported.meshes[0];
    let targets = &m.mesh.morph_targets;
    let names: Vec<&str> = targets.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["bulge", "top", "shear"]);
    assert_eq!(targets.default_weights, [0.1, 0.0, 0.2]);
    // The sparse target stores only the vertices it moves.
    assert_eq!(targets.targets[1].deltas.len(), 4);
    let set = targets.build(m.mesh.positions.len()).unwrap();
    let built = imported.build_library().unwrap();
    let (device, queue) = common::device();
    let gpu_targets = GpuMorphTargets::new(&device, &set).unwrap();
    let desc = AnimatorDesc::default().with_morph_weights(3);
    let mut animator = Animator::new(&device, &built.library, &desc).unwrap();
    let extent = {
        let (lo, hi) = m.mesh.bounds();
        f64::from((hi - lo).max_element())
    };
    let vertices = m.mesh.gpu_vertices();
    let clips = &imported.skeletons[m.skeleton].clips;
    let (mut checked, mut worst) = (0, 0.0f64);
    for case in fixture["cases"].as_array().unwrap() {
        let name = case["animation"].as_str().unwrap();
        let time = case["time"].as_f64().unwrap() as f32;
        let k = clips.iter().position(|c| c.clip.name == name).unwrap();
        animator.controller_mut().truncate(0);
        animator
            .controller_mut()
            .add_instance(
                &InstanceDesc::new(built.clips[m.skeleton][k])
                    .with_time(time)
                    .with_rate(0.0),
            )
            .unwrap();
        animator
            .controller_mut()
            .set_morph_weights(0, &targets.default_weights)
            .unwrap();
        animator.prepare(&queue, 0.0);
        let mut encoder = device.create_command_encoder(&Default::default());
        animator.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let gpu = skin_on_gpu_morphed(&device, &queue, &animator, 0, &gpu_targets, &vertices).unwrap();
        let want = case["positions"].as_array().unwrap();
        assert_eq!(want.len(), gpu.len());
        for (v, (g, w)) in gpu.iter().zip(want).enumerate() {
            let w: Vec<f64> = w.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
            let err = (0..3)
                .map(|c| (f64::from(g.position[c]) - w[c]).abs())
                .fold(0.0, f64::max);
            assert!(
                err <= 1e-4 * extent,
                "{name} at {time} s, vertex {v}: GPU {g:?}, three.js {w:?}"
            );
            worst = worst.max(err / extent);
        }
        checked += 1;
    }
    assert_eq!(checked, 15);
    eprintln!("worst vertex against three.js: {worst:.1e} of the extent");
}

/// Room past the limit is an error; tracks without keys drive nothing (a clip of only those
/// does not switch the library to blending weights); an instance added where one was removed
/// starts from weights of 0, on the GPU too.
#[test]
fn limits_keyless_tracks_and_reused_places() {
    let (device, queue) = common::device();
    let (lib, _, clips) = mannequin::library();
    let too_much = AnimatorDesc::default().with_morph_weights(wgpu_anim::layout::MAX_MORPH_TARGETS + 1);
    let e = Animator::new(&device, &lib, &too_much)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("morph weights"), "{e}");

    let skeleton = mannequin::skeleton();
    let mut clip = mannequin::clips(&skeleton).remove(0);
    clip.morph_weights = vec![wgpu_anim::Track::default(); 3];
    let mut b = wgpu_anim::LibraryBuilder::new();
    let s = b.add_skeleton(skeleton);
    b.add_clip(s, &clip).unwrap();
    let keyless = b.build();
    assert!(!keyless.has_morph_weights());
    assert_eq!(keyless.morph_targets(0), 0);

    let desc = AnimatorDesc::default().with_morph_weights(2);
    let mut animator = Animator::new(&device, &lib, &desc).unwrap();
    animator
        .controller_mut()
        .add_instance(&InstanceDesc::new(clips[0]))
        .unwrap();
    animator.controller_mut().set_morph_weights(0, &[0.5, 0.25]).unwrap();
    animator.prepare(&queue, 0.0);
    animator.controller_mut().truncate(0);
    animator
        .controller_mut()
        .add_instance(&InstanceDesc::new(clips[0]))
        .unwrap();
    assert_eq!(animator.controller().morph_weights(0), Some(&[0.0, 0.0][..]));
    animator.prepare(&queue, 0.0);
    let gpu: Vec<f32> = animator
        .read_page_buffer(&device, &queue, 0, wgpu_anim::shaders::Resource::MorphWeights, 0, 2)
        .unwrap();
    assert_eq!(gpu, [0.0, 0.0]);
}

/// The morph weights and the dual quaternions are sections of other buffers (the character
/// state, the palettes), not bindings of their own: with or without either, every pass binds at
/// most six storage buffers, and the fused pass keeps the way of running a character asked for
/// (with a thread per character it binds the local poses too). Both kinds play a frame.
#[test]
fn morph_weights_and_dual_palettes_take_no_binding_of_their_own() {
    use wgpu_anim::shaders::{Access, Resource, Stage};
    let (device, queue) = common::device();
    let binds = |a: &Animator, stage: Stage, r: Resource| {
        a.stage_bindings(stage)
            .unwrap_or_else(|| panic!("no {} pipeline", stage.name()))
            .iter()
            .any(|(b, _)| *b == r)
    };
    let (plain, _, plain_clips) = mannequin::library();
    let (driving, driving_clips, _) = driving_library();
    for (lib, clip, morph) in [(&plain, plain_clips[1], false), (&driving, driving_clips[0], true)] {
        for dual_quaternion in [false, true] {
            let desc = AnimatorDesc::default()
                .with_max_instances(4)
                .with_dual_quaternion(dual_quaternion);
            let mut a = Animator::new(&device, lib, &desc).unwrap();
            a.set_fused(true).unwrap();
            let what = format!("morph {morph}, dual quaternions {dual_quaternion}");
            for stage in [Stage::Sample, Stage::Palette, Stage::Fused] {
                for section in [Resource::MorphWeights, Resource::DualPalettes, Resource::BlendLists] {
                    assert!(!binds(&a, stage, section), "{what}: {}", stage.name());
                }
                let storage = a
                    .stage_bindings(stage)
                    .unwrap()
                    .iter()
                    .filter(|(_, access)| *access != Access::Uniform)
                    .count();
                assert!(storage <= 6, "{what}: {} binds {storage}", stage.name());
            }
            assert!(binds(&a, Stage::Sample, Resource::CharacterState) || !morph, "{what}");
            assert!(binds(&a, Stage::Fused, Resource::Palettes), "{what}");
            assert_eq!(a.stage_bindings(Stage::Skin), None);
            use wgpu_anim::gpu::CharacterThreads;
            let threads = a.character_threads();
            assert_eq!(a.fused_character_threads(), Some(threads), "{what}");
            assert_eq!(
                binds(&a, Stage::Fused, Resource::LocalPoses),
                threads == CharacterThreads::One,
                "{what}"
            );
            a.controller_mut().add_instance(&InstanceDesc::new(clip)).unwrap();
            for fused in [true, false] {
                a.set_fused(fused).unwrap();
                a.prepare(&queue, 1.0 / 60.0);
                let mut encoder = device.create_command_encoder(&Default::default());
                a.encode(&mut encoder).unwrap();
                queue.submit([encoder.finish()]);
                device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
            }
        }
    }
}
