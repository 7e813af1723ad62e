//! Dual-quaternion skinning: what it keeps that linear blending loses, measured on a cylinder
//! arm of two joints (twisted 180°, bent 90°, scaled non-uniformly, mirrored), the CPU mirror
//! against the f64 reference, and the GPU's palette stage and skinning against the mirror.
//!
//! Tolerances: the mirror against the f64 reference 1e-5 × the arm's length (2) on positions;
//! the GPU against the mirror 1e-5 relative to 1 + |value| (the same operations in the same
//! order; FMA contraction and `sqrt` may differ by an ulp).

mod common;

use glam::{DMat4, Quat, Vec3, Vec4};
use std::f32::consts::{FRAC_PI_2, PI};
use wgpu_anim::gpu::Skinning;
use wgpu_anim::layout::BlendList;
use wgpu_anim::math::{Affine, DualQuat};
use wgpu_anim::mesh::{SkinVertex, SkinnedMesh};
use wgpu_anim::testing::skin_on_gpu_blended;
use wgpu_anim::{
    AnimationLibrary, Animator, AnimatorDesc, Clip, ClipId, InstanceDesc, JointTrack, LibraryBuilder, Skeleton, Track,
    Transform, cpu, reference,
};

/// The arm: two bones of length 1 along +Y, the elbow at y = 1.
const BONE: f32 = 1.0;
const RADIUS: f32 = 0.25;
const RINGS: usize = 41;
const SEGMENTS: usize = 48;
/// Half the width of the band around the elbow where the two joints share the skin.
const BLEND: f32 = 0.3;

fn arm() -> Skeleton {
    Skeleton::from_rest_pose(
        "arm",
        vec![
            ("upper".into(), None, Transform::IDENTITY),
            ("fore".into(), Some(0), Transform::from_translation(Vec3::Y * BONE)),
        ],
    )
    .unwrap()
}

/// The forearm's weight at height `y`: 0 below the band, 1 above, smooth in between.
fn fore_weight(y: f32) -> f32 {
    let u = ((y - (BONE - BLEND)) / (2.0 * BLEND)).clamp(0.0, 1.0);
    u * u * (3.0 - 2.0 * u)
}

/// A closed cylinder of `RINGS` rings of `SEGMENTS` vertices from y = 0 to y = 2, capped,
/// triangles wound outwards. Ring `k` is vertices `k · SEGMENTS ..`; the cap centres are last.
fn cylinder() -> SkinnedMesh {
    let mut mesh = SkinnedMesh {
        morph_targets: Default::default(),
        name: "cylinder".into(),
        positions: Vec::new(),
        normals: Vec::new(),
        uvs: Vec::new(),
        joints: Vec::new(),
        weights: Vec::new(),
        indices: Vec::new(),
    };
    let mut push = |p: Vec3| {
        let w = fore_weight(p.y);
        mesh.positions.push(p);
        mesh.joints.push([0, 1, 0, 0]);
        mesh.weights.push([1.0 - w, w, 0.0, 0.0]);
    };
    for k in 0..RINGS {
        let y = 2.0 * BONE * k as f32 / (RINGS - 1) as f32;
        for i in 0..SEGMENTS {
            let a = 2.0 * PI * i as f32 / SEGMENTS as f32;
            push(Vec3::new(RADIUS * a.cos(), y, RADIUS * a.sin()));
        }
    }
    push(Vec3::ZERO);
    push(Vec3::Y * 2.0 * BONE);
    let at = |k: usize, i: usize| (k * SEGMENTS + i % SEGMENTS) as u32;
    let (bottom, top) = ((RINGS * SEGMENTS) as u32, (RINGS * SEGMENTS + 1) as u32);
    for k in 0..RINGS - 1 {
        for i in 0..SEGMENTS {
            mesh.indices.extend([at(k, i), at(k + 1, i), at(k, i + 1)]);
            mesh.indices.extend([at(k + 1, i), at(k + 1, i + 1), at(k, i + 1)]);
        }
    }
    for i in 0..SEGMENTS {
        mesh.indices.extend([bottom, at(0, i), at(0, i + 1)]);
        mesh.indices.extend([top, at(RINGS - 1, i + 1), at(RINGS - 1, i)]);
    }
    mesh.validate(2).unwrap();
    mesh
}

/// A clip that holds the forearm at `rotation` and `scale`.
fn hold(name: &str, rotation: Quat, scale: Vec3) -> Clip {
    Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: name.into(),
        duration: 1.0,
        looping: false,
        tracks: vec![JointTrack {
            joint: "fore".into(),
            rotation: Some(Track::constant(rotation)),
            scale: Some(Track::constant(scale)),
            ..Default::default()
        }],
    }
}

/// The poses the tests take: twisted 180° about the arm, bent 90°, twisted 100° and scaled
/// non-uniformly, mirrored across its own x, flattened, sheared.
fn clips() -> Vec<Clip> {
    vec![
        hold("twist", Quat::from_rotation_y(PI), Vec3::ONE),
        hold("bend", Quat::from_rotation_z(FRAC_PI_2), Vec3::ONE),
        hold(
            "squash",
            Quat::from_rotation_y(1.75) * Quat::from_rotation_z(0.4),
            Vec3::new(1.6, 0.6, 1.2),
        ),
        hold("mirror", Quat::from_rotation_z(0.5), Vec3::new(-1.0, 1.0, 1.0)),
        // Scaled to almost nothing along one axis: flat, its rotation still found.
        hold("flat", Quat::from_rotation_x(0.8), Vec3::new(1.0, 1e-5, 1.0)),
        sheared(),
    ]
}

/// The upper arm scaled non-uniformly under the forearm's turn: the forearm's skinning matrix
/// shears (its stretch has off-diagonal elements).
fn sheared() -> Clip {
    let mut clip = hold(
        "shear",
        Quat::from_rotation_z(0.9) * Quat::from_rotation_y(0.6),
        Vec3::ONE,
    );
    clip.tracks.push(JointTrack {
        joint: "upper".into(),
        scale: Some(Track::constant(Vec3::new(1.5, 0.7, 1.1))),
        ..Default::default()
    });
    clip
}

fn library() -> (AnimationLibrary, Vec<ClipId>) {
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(arm());
    let ids = clips().iter().map(|c| b.add_clip(s, c).unwrap()).collect();
    (b.build(), ids)
}

/// The mirror's pose of `clip` with the dual quaternions written: (palettes, dual quaternions).
fn mirror_pose(lib: &AnimationLibrary, clip: ClipId) -> (Vec<Affine>, Vec<DualQuat>) {
    let mut inst = cpu::clip_instance(lib, clip, 0).unwrap();
    inst.dual_quaternion = 1.0;
    let mut list = BlendList::default();
    cpu::add_sample(&mut list, clip.index(), 0.0, 1.0, 0);
    let pose = cpu::evaluate(lib, &[inst], &[list]).unwrap();
    (pose.palette, pose.dual)
}

/// Skinned positions of the cylinder by the mirror, `amount` by dual quaternions.
fn mirror_skin(lib: &AnimationLibrary, clip: ClipId, amount: f32) -> Vec<Vec3> {
    let (palette, dual) = mirror_pose(lib, clip);
    let vertices = cylinder().gpu_vertices();
    cpu::skin_blended(&palette, &dual, 0, amount, &vertices)
        .unwrap()
        .iter()
        .map(|p| p.position.truncate())
        .collect()
}

/// The f64 reference's palette of `clip`.
fn reference_palette(clip: &Clip) -> Vec<DMat4> {
    let skeleton = arm();
    let local = reference::sample(&skeleton, clip, 0.0);
    reference::palette(&skeleton, &reference::local_to_model(&skeleton, &local))
}

/// The area of ring `k` of `points` seen along the arm's axis at that ring, `axis`.
fn ring_area(points: &[Vec3], k: usize, axis: Vec3) -> f32 {
    let ring = &points[k * SEGMENTS..(k + 1) * SEGMENTS];
    let centre = ring.iter().copied().sum::<Vec3>() / SEGMENTS as f32;
    let mut twice = Vec3::ZERO;
    for i in 0..SEGMENTS {
        twice += (ring[i] - centre).cross(ring[(i + 1) % SEGMENTS] - centre);
    }
    (twice.dot(axis) * 0.5).abs()
}

/// The volume the closed mesh `indices` encloses over `points`.
fn volume(points: &[Vec3], indices: &[u32]) -> f32 {
    let v: f64 = indices
        .chunks_exact(3)
        .map(|t| {
            let [a, b, c] = [0, 1, 2].map(|k| points[t[k] as usize].as_dvec3());
            a.dot(b.cross(c)) / 6.0
        })
        .sum();
    v as f32
}

#[test]
fn a_cylinder_twisted_half_a_turn_keeps_its_section_with_dual_quaternions() {
    let (lib, clips) = library();
    let rest = cylinder().positions;
    let middle = (RINGS - 1) / 2;
    let rest_area = ring_area(&rest, middle, Vec3::Y);
    let linear = mirror_skin(&lib, clips[0], 0.0);
    let dual = mirror_skin(&lib, clips[0], 1.0);
    // Every ring: linear blending pinches the band around the elbow (the "candy wrapper");
    // dual quaternions keep every ring's area.
    let ratio = |points: &[Vec3], k: usize| ring_area(points, k, Vec3::Y) / ring_area(&rest, k, Vec3::Y);
    let lbs_middle = ratio(&linear, middle);
    let dqs_min = (0..RINGS).map(|k| ratio(&dual, k)).fold(f32::INFINITY, f32::min);
    let dqs_max = (0..RINGS).map(|k| ratio(&dual, k)).fold(0.0, f32::max);
    eprintln!(
        "twist 180°: middle ring area / rest: linear {lbs_middle:.4}, dual quaternion {:.4}; dual quaternion over every ring {dqs_min:.4}..{dqs_max:.4} (rest area {rest_area:.4})",
        ratio(&dual, middle)
    );
    assert!(
        lbs_middle < 0.01,
        "linear blending collapses the middle ring: {lbs_middle}"
    );
    assert!(
        dqs_min > 0.98 && dqs_max < 1.02,
        "dual quaternions keep every ring within 2 %: {dqs_min}..{dqs_max}"
    );
    // A blend halfway lies between the two.
    let half = ratio(&mirror_skin(&lib, clips[0], 0.5), middle);
    assert!(half > lbs_middle && half < ratio(&dual, middle), "{half}");
}

#[test]
fn a_bent_elbow_keeps_more_of_its_volume_with_dual_quaternions() {
    let (lib, clips) = library();
    let mesh = cylinder();
    let rest = volume(&mesh.positions, &mesh.indices);
    let linear = volume(&mirror_skin(&lib, clips[1], 0.0), &mesh.indices) / rest;
    let dual = volume(&mirror_skin(&lib, clips[1], 1.0), &mesh.indices) / rest;
    // Where the elbow folds, linear blending pulls the inside and the outside of the band
    // towards the joint's axis: the band thins. Dual quaternions rotate the band instead.
    let middle = (RINGS - 1) / 2;
    let axis = (Vec3::Y + Quat::from_rotation_z(FRAC_PI_2) * Vec3::Y).normalize();
    let thickness = |points: &[Vec3]| ring_area(points, middle, axis) / ring_area(&mesh.positions, middle, Vec3::Y);
    let (lbs_ring, dqs_ring) = (
        thickness(&mirror_skin(&lib, clips[1], 0.0)),
        thickness(&mirror_skin(&lib, clips[1], 1.0)),
    );
    eprintln!(
        "bend 90°: volume / rest: linear {linear:.4}, dual quaternion {dual:.4}; elbow ring area / rest: linear {lbs_ring:.4}, dual quaternion {dqs_ring:.4}"
    );
    assert!(rest > 0.0);
    assert!(
        (1.0 - dual).abs() < (1.0 - linear).abs(),
        "dual quaternions lose less volume: {dual} against {linear}"
    );
    assert!(linear < 0.97, "linear blending loses volume at a 90° elbow: {linear}");
    assert!(dqs_ring > lbs_ring, "{dqs_ring} against {lbs_ring}");
}

#[test]
fn scaled_and_mirrored_joints_skin_their_own_vertices_as_their_matrix_and_the_rest_as_the_reference() {
    let (lib, ids) = library();
    let mesh = cylinder();
    let vertices: Vec<SkinVertex> = mesh.gpu_vertices();
    for (clip, id) in clips().iter().zip(&ids) {
        let (palette, dual) = mirror_pose(&lib, *id);
        // Two-phase: R S + t gives back each skinning matrix.
        for (k, d) in palette.iter().zip(&dual) {
            let one = SkinVertex {
                position: [0.3, -0.2, 0.7],
                normal: [0.0, 0.0, 1.0],
                uv: [0.0; 2],
                joints: [0; 4],
                weights: [1.0, 0.0, 0.0, 0.0],
            };
            let by_dual =
                cpu::skin_blended(std::slice::from_ref(k), std::slice::from_ref(d), 0, 1.0, &[one]).unwrap()[0];
            let by_matrix = k.transform_point3(Vec3::from(one.position));
            assert!(
                (by_dual.position.truncate() - by_matrix).abs().max_element() < 1e-5,
                "{}: {by_dual:?} against {by_matrix:?} ({d:?})",
                clip.name
            );
            assert!(d.real.length() > 0.99999 && d.real.length() < 1.00001, "{}", clip.name);
        }
        // Against the f64 reference, every vertex.
        let expected = reference::skin_dual(&mesh, &reference_palette(clip));
        let got = cpu::skin_blended(&palette, &dual, 0, 1.0, &vertices).unwrap();
        let worst = expected
            .iter()
            .zip(&got)
            .map(|(e, g)| (e.as_vec3() - g.position.truncate()).abs().max_element())
            .fold(0.0, f32::max);
        assert!(worst < 2e-5, "{}: {worst}", clip.name);
        // Vertices of the upper arm alone do not move; of the forearm alone move as its matrix.
        for (v, p) in got.iter().enumerate().take(RINGS * SEGMENTS) {
            let w = mesh.weights[v][1];
            if w == 0.0 || w == 1.0 {
                let k = &palette[usize::from(w == 1.0)];
                let by_matrix = k.transform_point3(mesh.positions[v]);
                assert!(
                    (p.position.truncate() - by_matrix).abs().max_element() < 1e-5,
                    "{}, vertex {v}",
                    clip.name
                );
            }
        }
    }
}

#[test]
fn the_comparison_with_the_reference_fails_on_linear_blending() {
    // The check above would catch a skinning that is not the reference's: linear blending of the
    // twisted arm is far from dual-quaternion skinning.
    let (lib, ids) = library();
    let mesh = cylinder();
    let expected = reference::skin_dual(&mesh, &reference_palette(&clips()[0]));
    let linear = mirror_skin(&lib, ids[0], 0.0);
    let worst = expected
        .iter()
        .zip(&linear)
        .map(|(e, g)| (e.as_vec3() - *g).abs().max_element())
        .fold(0.0, f32::max);
    assert!(worst > 0.1, "{worst}");
    // And the f64 linear reference agrees with the mirror's linear blending.
    let lbs = reference::skin(&mesh, &reference_palette(&clips()[0]));
    let worst = lbs
        .iter()
        .zip(&linear)
        .map(|(e, g)| (e.as_vec3() - *g).abs().max_element())
        .fold(0.0, f32::max);
    assert!(worst < 2e-5, "{worst}");
}

/// Within 1e-5 relative to 1 + |b|.
fn close(a: Vec4, b: Vec4) -> bool {
    (a - b).abs().max_element() <= 1e-5 * (1.0 + b.abs().max_element())
}

fn same_dual(a: &DualQuat, b: &DualQuat) -> bool {
    close(a.real, b.real)
        && close(a.dual, b.dual)
        && close(a.stretch_diagonal, b.stretch_diagonal)
        && close(a.stretch_off, b.stretch_off)
}

#[test]
fn the_gpu_writes_and_skins_with_the_dual_quaternions_the_mirror_computes() {
    let (device, queue) = common::device();
    let (lib, ids) = library();
    let desc = AnimatorDesc::default().with_dual_quaternion(true);
    let mut animator = Animator::new(&device, &lib, &desc).unwrap();
    // Every clip with dual quaternions, then one linear and one blended.
    let mut skinning = Vec::new();
    for (k, &clip) in ids.iter().chain(&ids[..2]).enumerate() {
        let s = match k {
            k if k < ids.len() => Skinning::DualQuaternion,
            k if k == ids.len() => Skinning::Linear,
            _ => Skinning::Blend(0.3),
        };
        animator
            .controller_mut()
            .add_instance(&InstanceDesc::new(clip).with_skinning(s))
            .unwrap();
        skinning.push(s);
    }
    let vertices = cylinder().gpu_vertices();
    for fused in [false, true] {
        animator.set_fused(fused).unwrap();
        animator.prepare(&queue, 1.0 / 60.0);
        let mut encoder = device.create_command_encoder(&Default::default());
        animator.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let (_, pose) = animator.read_back(&device, &queue).unwrap();
        let lists = animator.read_blend_lists(&device, &queue).unwrap();
        let instances = animator.controller().instances().to_vec();
        let mirror = cpu::evaluate(&lib, &instances, &lists).unwrap();
        for (i, inst) in instances.iter().enumerate() {
            let joints = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
            let amount = skinning[i].dual_amount().unwrap();
            for j in joints.clone() {
                if amount > 0.0 {
                    assert!(
                        same_dual(&pose.dual[j], &mirror.dual[j]),
                        "fused {fused}, instance {i}, joint {j}: GPU {:?}, mirror {:?}",
                        pose.dual[j],
                        mirror.dual[j]
                    );
                } else {
                    // Not written for a linear instance.
                    assert_eq!(pose.dual[j], DualQuat::default(), "fused {fused}, instance {i}");
                }
            }
            // Skinning on the GPU (the `skin` entry, the module's `wgpu_anim_skin_blended_at`).
            let gpu = skin_on_gpu_blended(&device, &queue, &animator, inst.joint_offset, amount, &vertices).unwrap();
            let cpu = cpu::skin_blended(&pose.palette, &pose.dual, inst.joint_offset, amount, &vertices).unwrap();
            for (v, (g, c)) in gpu.iter().zip(&cpu).enumerate() {
                assert!(
                    close(g.position, c.position) && close(g.normal, c.normal),
                    "fused {fused}, instance {i} ({:?}), vertex {v}: GPU {g:?}, CPU {c:?}",
                    skinning[i]
                );
            }
        }
        // The sheared forearm's stretch has off-diagonal elements (its elements are checked).
        let shear = &instances[ids.len() - 1];
        assert!(
            pose.dual[shear.joint_offset as usize + 1]
                .stretch_off
                .truncate()
                .abs()
                .max_element()
                > 0.05
        );
        // The comparison fails on the wrong buffer: each instance's dual quaternions against
        // the next clip's.
        let wrong = (0..ids.len() - 1)
            .filter(|&i| {
                let (a, b) = (
                    instances[i].joint_offset as usize + 1,
                    instances[i + 1].joint_offset as usize + 1,
                );
                !same_dual(&pose.dual[a], &mirror.dual[b])
            })
            .count();
        assert_eq!(wrong, ids.len() - 1);
    }
}

#[test]
fn dual_quaternions_need_an_animator_that_keeps_them_and_amounts_within_zero_and_one() {
    let (device, queue) = common::device();
    let (lib, ids) = library();
    let mut plain = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    let e = plain
        .controller_mut()
        .add_instance(&InstanceDesc::new(ids[0]).with_skinning(Skinning::DualQuaternion))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("instance 0") && e.contains("AnimatorDesc::dual_quaternion"),
        "{e}"
    );
    plain.controller_mut().add_instance(&InstanceDesc::new(ids[0])).unwrap();
    let e = plain
        .controller_mut()
        .set_skinning(0, Skinning::Blend(0.5))
        .unwrap_err()
        .to_string();
    assert!(e.contains("AnimatorDesc::dual_quaternion"), "{e}");
    assert_eq!(plain.controller().dual_quaternion_amount(0), Some(0.0));
    assert!(plain.page_dual_palette_buffer(0).is_none());
    // No dual palettes to bind or skin with.
    let binding = wgpu_anim::gpu::SkinBinding::default().with_dual_quaternion(true);
    let layout = binding.bind_group_layout(&device).unwrap();
    let e = binding
        .bind_group(&device, &layout, &plain, 0, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("keeps no dual quaternions"), "{e}");
    let vertices = cylinder().gpu_vertices();
    let e = skin_on_gpu_blended(&device, &queue, &plain, 0, 1.0, &vertices)
        .unwrap_err()
        .to_string();
    assert!(e.contains("keeps no dual quaternions"), "{e}");

    let desc = AnimatorDesc::default().with_dual_quaternion(true);
    let mut dual = Animator::new(&device, &lib, &desc).unwrap();
    dual.controller_mut().add_instance(&InstanceDesc::new(ids[0])).unwrap();
    for bad in [f32::NAN, -0.1, 1.5, f32::INFINITY] {
        let e = dual
            .controller_mut()
            .set_skinning(0, Skinning::Blend(bad))
            .unwrap_err()
            .to_string();
        assert!(e.contains("instance 0") && e.contains("[0, 1]"), "{bad}: {e}");
        assert_eq!(
            dual.controller().dual_quaternion_amount(0),
            Some(0.0),
            "nothing changes"
        );
    }
    // The arm's library scales a joint: the rigid variant is refused, the two-phase one binds.
    assert!(lib.has_scale());
    let rigid = wgpu_anim::gpu::SkinBinding::default()
        .with_dual_quaternion(true)
        .with_rigid(true);
    assert!(!wgpu_anim::gpu::SkinBinding::default().for_animator(&dual).rigid);
    let layout = rigid.bind_group_layout(&device).unwrap();
    let e = rigid
        .bind_group(&device, &layout, &dual, 0, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("AnimationLibrary::has_scale"), "{e}");
    let two_phase = rigid.with_rigid(false);
    two_phase.bind_group(&device, &layout, &dual, 0, &[]).unwrap();
    let e = dual
        .controller_mut()
        .set_skinning(3, Skinning::DualQuaternion)
        .unwrap_err()
        .to_string();
    assert!(e.contains("instance 3") && e.contains("does not exist"), "{e}");
    let controller = dual.controller_mut();
    controller.set_skinning(0, Skinning::Blend(0.25)).unwrap();
    assert_eq!(controller.dual_quaternion_amount(0), Some(0.25));
    controller.set_skinning(0, Skinning::DualQuaternion).unwrap();
    assert_eq!(controller.dual_quaternion_amount(0), Some(1.0));
}

#[test]
fn a_library_has_scale_when_a_rest_pose_key_or_inverse_bind_scales_or_mirrors() {
    let build = |skeleton: Skeleton, clip: Option<Clip>| {
        let mut b = LibraryBuilder::new();
        let s = b.add_skeleton(skeleton);
        if let Some(c) = clip {
            b.add_clip(s, &c).unwrap();
        }
        b.build()
    };
    let rigid = hold("rigid", Quat::from_rotation_z(0.3), Vec3::ONE);
    assert!(!build(arm(), Some(rigid.clone())).has_scale());
    assert!(!wgpu_anim::mannequin::library().0.has_scale());
    // A clip key.
    assert!(build(arm(), Some(hold("grow", Quat::IDENTITY, Vec3::new(1.0, 1.001, 1.0)))).has_scale());
    assert!(build(arm(), Some(hold("flip", Quat::IDENTITY, Vec3::new(1.0, -1.0, 1.0)))).has_scale());
    // Within the tolerance: none.
    assert!(!build(arm(), Some(hold("noise", Quat::IDENTITY, Vec3::splat(1.0 + 2e-6)))).has_scale());
    // A cubic spline: keys of 1 with tangents of 0 hold 1; a tangent swings it.
    let cubic = |tangent: Vec3| {
        let mut c = hold("cubic", Quat::IDENTITY, Vec3::ONE);
        c.tracks[0].scale = Some(Track {
            interpolation: wgpu_anim::Interpolation::CubicSpline,
            times: vec![0.0, 1.0],
            values: vec![Vec3::ZERO, Vec3::ONE, tangent, Vec3::ZERO, Vec3::ONE, Vec3::ZERO],
        });
        c
    };
    assert!(!build(arm(), Some(cubic(Vec3::ZERO))).has_scale());
    assert!(build(arm(), Some(cubic(Vec3::new(0.0, 1.0, 0.0)))).has_scale());
    // A rest pose.
    let scaled_rest = Skeleton::from_rest_pose(
        "arm",
        vec![
            (
                "upper".into(),
                None,
                Transform::new(Vec3::ZERO, Quat::IDENTITY, Vec3::splat(0.01)),
            ),
            ("fore".into(), Some(0), Transform::from_translation(Vec3::Y)),
        ],
    )
    .unwrap();
    assert!(build(scaled_rest, None).has_scale());
    // Compressed clips: a packed scale channel counts.
    let mut b = LibraryBuilder::new();
    b.set_compression(Some(Default::default()));
    let s = b.add_skeleton(arm());
    let mut wobble = hold("wobble", Quat::IDENTITY, Vec3::ONE);
    wobble.tracks[0].scale = Some(Track::linear([(0.0, Vec3::ONE), (1.0, Vec3::new(1.5, 1.0, 1.0))]));
    b.add_clip(s, &wobble).unwrap();
    assert!(b.build().has_scale());
}
