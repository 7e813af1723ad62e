//! Known values of each CPU stage, worked out by hand, and the mirror against the f64 reference.

mod common;

use glam::{Quat, Vec3, Vec4, Vec4Swizzles};
use std::f32::consts::FRAC_PI_2;
use wgpu_anim::offline::compress::ClipFormat;
use wgpu_anim::{
    Clip, Interpolation, JointTrack, LibraryBuilder, Skeleton, Track, Transform, cpu, mannequin, reference,
};

fn chain() -> Skeleton {
    // root at the origin, then two bones of length 1 along +y.
    Skeleton::from_rest_pose(
        "chain",
        vec![
            ("root".into(), None, Transform::IDENTITY),
            ("a".into(), Some(0), Transform::from_translation(Vec3::Y)),
            ("b".into(), Some(1), Transform::from_translation(Vec3::Y)),
        ],
    )
    .unwrap()
}

fn one_clip(skel: Skeleton, clip: Clip) -> (wgpu_anim::AnimationLibrary, wgpu_anim::ClipId) {
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(skel);
    let c = b.add_clip(s, &clip).unwrap();
    (b.build(), c)
}

#[test]
fn propagation_composes_parents_before_children() {
    // Rotating the root 90° about z swings the whole chain from +y to -x.
    let clip = Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: "bend".into(),
        duration: 1.0,
        looping: false,
        tracks: vec![
            JointTrack {
                joint: "root".into(),
                rotation: Some(Track::constant(Quat::from_rotation_z(FRAC_PI_2))),
                ..Default::default()
            },
            JointTrack {
                joint: "a".into(),
                rotation: Some(Track::constant(Quat::from_rotation_z(-FRAC_PI_2))),
                ..Default::default()
            },
        ],
    };
    let (lib, c) = one_clip(chain(), clip);
    let pose = cpu::pose_at(&lib, c, 0.5).unwrap();
    let pos = |j: usize| pose.model[j].transform_point3(Vec3::ZERO);
    assert!(pos(1).abs_diff_eq(Vec3::new(-1.0, 0.0, 0.0), 1e-6), "{:?}", pos(1));
    // Joint a undoes the root's rotation, so b sits one unit further along +y from a.
    assert!(pos(2).abs_diff_eq(Vec3::new(-1.0, 1.0, 0.0), 1e-6), "{:?}", pos(2));
}

#[test]
fn sampling_known_values_for_every_interpolation() {
    let tracks = vec![
        JointTrack {
            joint: "root".into(),
            translation: Some(Track::linear([(0.0, Vec3::ZERO), (2.0, Vec3::new(4.0, 0.0, 0.0))])),
            rotation: Some(Track {
                interpolation: Interpolation::Step,
                times: vec![0.0, 1.0],
                values: vec![Quat::IDENTITY, Quat::from_rotation_y(1.0)],
            }),
            ..Default::default()
        },
        JointTrack {
            joint: "a".into(),
            // Hermite with zero tangents between 0 and 1 over [0, 2]: smoothstep.
            scale: Some(Track {
                interpolation: Interpolation::CubicSpline,
                times: vec![0.0, 2.0],
                values: vec![
                    Vec3::ZERO,
                    Vec3::ONE,
                    Vec3::ZERO,
                    Vec3::ZERO,
                    Vec3::splat(2.0),
                    Vec3::ZERO,
                ],
            }),
            // Keys of opposite sign: the short way from 0.2 to 1.0 rad about z.
            rotation: Some(Track::linear([
                (0.0, Quat::from_rotation_z(0.2)),
                (2.0, -Quat::from_rotation_z(1.0)),
            ])),
            ..Default::default()
        },
    ];
    let clip = Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: "k".into(),
        duration: 2.0,
        looping: false,
        tracks,
    };
    let (lib, c) = one_clip(chain(), clip);
    let p = cpu::pose_at(&lib, c, 0.5).unwrap();
    assert!(p.local[0].translation.xyz().abs_diff_eq(Vec3::new(1.0, 0.0, 0.0), 1e-6));
    assert_eq!(
        p.local[0].rotation,
        Vec4::from(Quat::IDENTITY),
        "step holds the earlier key"
    );
    assert!(
        (p.local[1].scale.x - (1.0 + 0.15625)).abs() < 1e-6,
        "smoothstep at 1/4: {:?}",
        p.local[1].scale
    );
    let q = Quat::from_vec4(p.local[1].rotation);
    assert!(q.angle_between(Quat::from_rotation_z(0.4)) < 1e-5, "{q:?}");
    let p = cpu::pose_at(&lib, c, 1.5).unwrap();
    let step = Quat::from_vec4(p.local[0].rotation);
    assert!(step.angle_between(Quat::from_rotation_y(1.0)) < 1e-6);
    // Clamped past the end.
    let p = cpu::pose_at(&lib, c, 5.0).unwrap();
    assert!(p.local[0].translation.xyz().abs_diff_eq(Vec3::new(4.0, 0.0, 0.0), 1e-6));
}

#[test]
fn palette_is_identity_in_the_bind_pose_and_skinning_returns_the_rest_positions() {
    let m = mannequin::mannequin();
    let bind = Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: "bind".into(),
        duration: 1.0,
        looping: false,
        tracks: vec![],
    };
    let (lib, c) = one_clip(m.skeleton.clone(), bind);
    let pose = cpu::pose_at(&lib, c, 0.0).unwrap();
    for (j, k) in pose.palette.iter().enumerate() {
        assert!(k.max_abs_diff(&wgpu_anim::Affine::IDENTITY) < 1e-5, "joint {j}: {k:?}");
    }
    let verts = m.mesh.gpu_vertices();
    let skinned = cpu::skin(&pose.palette, 0, &verts).unwrap();
    for (v, (s, r)) in skinned.iter().zip(&verts).enumerate() {
        assert!(s.position.xyz().abs_diff_eq(Vec3::from(r.position), 1e-5), "vertex {v}");
        assert!(
            s.normal.xyz().abs_diff_eq(Vec3::from(r.normal), 1e-4),
            "vertex {v} normal"
        );
    }
}

#[test]
fn looping_clips_wrap_without_a_seam() {
    // Raw, the last key is the first; compressed, each is within the compression bounds of it
    // (0.01 cm = 1e-4 m and 9e-5 per rotation element), so they differ by at most twice that.
    for (format, seam) in [(ClipFormat::Raw, 1e-6), (ClipFormat::Compressed, 3e-4)] {
        let (lib, _, clips) = mannequin::library_in(format);
        for &c in &clips {
            let d = lib.clip_duration(c).unwrap();
            let start = cpu::pose_at(&lib, c, 0.0).unwrap();
            let end = cpu::pose_at(&lib, c, d).unwrap();
            for (a, b) in start.palette.iter().zip(&end.palette) {
                assert!(
                    a.max_abs_diff(b) < seam,
                    "{} clip {} does not end where it starts",
                    format.name(),
                    c.index()
                );
            }
        }
    }
}

#[test]
fn cpu_mirror_matches_the_f64_reference() {
    let m = mannequin::mannequin();
    let (lib, _, clips) = mannequin::library_in(ClipFormat::Raw);
    let mut worst = 0.0f64;
    for (k, &c) in clips.iter().enumerate() {
        let d = lib.clip_duration(c).unwrap();
        for step in 0..20 {
            let t = d * step as f32 / 20.0 + 0.0123;
            let pose = cpu::pose_at(&lib, c, t).unwrap();
            let local = reference::sample(&m.skeleton, &m.clips[k], f64::from(t.min(d)));
            let pal = reference::palette(&m.skeleton, &reference::local_to_model(&m.skeleton, &local));
            for (g, w) in pose.palette.iter().zip(&pal) {
                worst = worst.max(wgpu_anim::math::mat4_max_abs_diff(&g.to_mat4(), &w.as_mat4()) as f64);
            }
        }
    }
    eprintln!("CPU mirror vs f64 reference over the built-in clips: worst palette element error {worst:e}");
    assert!(worst < 1e-4, "{worst}");
}
