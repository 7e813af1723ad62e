//! Key reduction (`offline::key_reduction`): real takes reduced with ozz-animation's default
//! tolerance play within it of the raw take at every key time and between keys, with fewer keys;
//! the comparison sees a reduction coarser than it checks; a track that does not move becomes one
//! key, a stepped track keeps its changes; keys the builder refuses stay for it to refuse; bad
//! settings are an error naming the clip.

use glam::{Quat, Vec3};
use wgpu_anim::cpu;
use wgpu_anim::layout::LocalPose;
use wgpu_anim::offline::gltf_import::{self, ClipSource};
use wgpu_anim::offline::key_reduction::{KeyReduction, reduce_keys};
use wgpu_anim::{Clip, Interpolation, JointDesc, JointTrack, LibraryBuilder, Skeleton, Track, Transform};

/// The largest error, in metres, of `got` against `want` by the reduction's measures: the
/// translation's distance, the displacement of a point `distance` from the joint by the rotation,
/// the largest scale change times that distance.
fn pose_error(got: &LocalPose, want: &LocalPose, distance: f64) -> f64 {
    let t = f64::from(got.translation.truncate().distance(want.translation.truncate()));
    let c = f64::from(got.rotation.dot(want.rotation).abs()).min(1.0);
    let r = 2.0 * (1.0 - c * c).sqrt() * distance;
    let s = f64::from((got.scale - want.scale).abs().max_element()) * distance;
    t.max(r).max(s)
}

/// Keys of the joint tracks of every clip.
fn key_count(clips: &[Clip]) -> usize {
    let keys = |t: &JointTrack| {
        t.translation.as_ref().map_or(0, |k| k.times.len())
            + t.rotation.as_ref().map_or(0, |k| k.times.len())
            + t.scale.as_ref().map_or(0, |k| k.times.len())
    };
    clips.iter().flat_map(|c| &c.tracks).map(keys).sum()
}

/// The largest error of `file`'s clips reduced with `settings` against the raw clips, over every
/// key time of the raw clips and the midpoints between them, each joint; and the keys before and
/// after.
fn reduction_error(file: &str, settings: KeyReduction) -> (f64, usize, usize) {
    let imp = gltf_import::load(std::path::Path::new(file)).expect("the asset loads");
    let s = imp.primary_skeleton().expect("a skeleton");
    let raw = imp.build_library_with(&ClipSource::Raw).expect("the raw library");
    let reduced = imp
        .build_library_with(&ClipSource::Reduce(settings))
        .expect("the reduced library");
    let clips: Vec<Clip> = imp.skeletons[s].clips.iter().map(|c| c.clip.clone()).collect();
    let reduced_clips: Vec<Clip> = clips
        .iter()
        .map(|c| reduce_keys(c, &settings).expect("reduces"))
        .collect();
    let mut worst = 0.0f64;
    for (k, clip) in clips.iter().enumerate() {
        let mut times: Vec<f32> = clip
            .tracks
            .iter()
            .filter_map(|t| t.rotation.as_ref())
            .flat_map(|r| r.times.windows(2).flat_map(|w| [w[0], 0.5 * (w[0] + w[1]), w[1]]))
            .collect();
        times.sort_by(f32::total_cmp);
        times.dedup();
        let (a, b) = (raw.clips[s][k], reduced.clips[s][k]);
        let (ha, hb) = (
            *raw.library.clip_header(a).unwrap(),
            *reduced.library.clip_header(b).unwrap(),
        );
        for &t in &times {
            for j in 0..ha.joint_count {
                let want = cpu::sample_joint(&raw.library, &ha, j, t).unwrap();
                let got = cpu::sample_joint(&reduced.library, &hb, j, t).unwrap();
                worst = worst.max(pose_error(&got, &want, f64::from(settings.distance)));
            }
        }
    }
    (worst, key_count(&clips), key_count(&reduced_clips))
}

#[test]
fn reduced_takes_play_within_the_tolerance_with_fewer_keys() {
    let settings = KeyReduction::default();
    for file in ["assets/cmu/cmu_01_03.glb", "assets/Fox/Fox.gltf"] {
        let (worst, before, after) = reduction_error(file, settings);
        // The tolerance, and f32 rounding of values up to a few metres.
        assert!(
            worst <= f64::from(settings.tolerance) * 1.01 + 1e-5,
            "{file}: {worst} m"
        );
        assert!(after < before, "{file}: {after} keys of {before}");
        eprintln!("{file}: {after} keys of {before}, largest error {worst:.2e} m");
    }
}

#[test]
fn the_comparison_sees_a_coarser_reduction() {
    let coarse = KeyReduction {
        tolerance: 0.05,
        ..KeyReduction::default()
    };
    let (worst, _, _) = reduction_error("assets/Fox/Fox.gltf", coarse);
    assert!(worst > 1.01e-3, "{worst} m");
}

/// A chain of `n` joints.
fn chain(n: usize) -> Skeleton {
    let joints = (0..n)
        .map(|k| JointDesc {
            name: format!("j{k}"),
            parent: k.checked_sub(1),
            rest: Transform::IDENTITY,
            inverse_bind: glam::Mat4::IDENTITY,
        })
        .collect();
    Skeleton::new("chain", joints).unwrap()
}

fn clip_of(tracks: Vec<JointTrack>) -> Clip {
    Clip {
        name: "moves".into(),
        duration: 1.0,
        looping: true,
        tracks,
        events: Vec::new(),
        curves: Vec::new(),
        morph_weights: Vec::new(),
    }
}

#[test]
fn a_still_track_keeps_one_key_a_stepped_one_its_changes_and_a_line_its_ends() {
    let times: Vec<f32> = (0..11).map(|k| k as f32 / 10.0).collect();
    let still = Track {
        interpolation: Interpolation::Linear,
        times: times.clone(),
        values: vec![Quat::from_rotation_y(0.3); 11],
    };
    let line = Track {
        interpolation: Interpolation::Linear,
        times: times.clone(),
        values: times.iter().map(|&t| Vec3::new(t, 2.0 * t, 0.0)).collect(),
    };
    let stepped = Track {
        interpolation: Interpolation::Step,
        times: times.clone(),
        values: times
            .iter()
            .map(|&t| Vec3::splat(if t < 0.45 { 1.0 } else { 2.0 }))
            .collect(),
    };
    let clip = clip_of(vec![JointTrack {
        joint: "j0".into(),
        translation: Some(line),
        rotation: Some(still),
        scale: Some(stepped),
    }]);
    let reduced = reduce_keys(&clip, &KeyReduction::default()).unwrap();
    let track = &reduced.tracks[0];
    assert_eq!(track.rotation.as_ref().unwrap().times, [0.0]);
    assert_eq!(track.translation.as_ref().unwrap().times, [0.0, 1.0]);
    assert_eq!(track.scale.as_ref().unwrap().times, [0.0, 0.5]);
    // And it builds and plays: the line's middle on the line.
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(chain(1));
    let id = b.add_clip(s, &reduced).unwrap();
    let lib = b.build();
    let p = cpu::sample_joint(&lib, lib.clip_header(id).unwrap(), 0, 0.55).unwrap();
    assert!((p.translation.truncate() - Vec3::new(0.55, 1.1, 0.0)).length() < 1e-6);
    assert_eq!(p.scale.truncate(), Vec3::splat(2.0));
}

#[test]
fn keys_the_builder_refuses_stay_and_bad_settings_are_an_error() {
    let times: Vec<f32> = (0..5).map(|k| k as f32 / 4.0).collect();
    let mut values = vec![Vec3::ZERO; 5];
    values[2] = Vec3::new(f32::NAN, 0.0, 0.0);
    let clip = clip_of(vec![JointTrack {
        joint: "j0".into(),
        translation: Some(Track {
            interpolation: Interpolation::Linear,
            times,
            values,
        }),
        rotation: None,
        scale: None,
    }]);
    let reduced = reduce_keys(&clip, &KeyReduction::default()).unwrap();
    // (NaN is not equal to itself: the keys compared by their bits.)
    let bits = |c: &Clip| {
        let t = c.tracks[0].translation.as_ref().unwrap();
        (
            t.times.clone(),
            t.values
                .iter()
                .map(|v| v.to_array().map(f32::to_bits))
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(bits(&reduced), bits(&clip), "a track with a NaN key is left as it is");
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(chain(1));
    assert!(b.add_clip(s, &reduced).is_err(), "the builder refuses it");
    for settings in [
        KeyReduction {
            tolerance: f32::NAN,
            ..KeyReduction::default()
        },
        KeyReduction {
            tolerance: -1.0,
            ..KeyReduction::default()
        },
        KeyReduction {
            distance: 0.0,
            ..KeyReduction::default()
        },
    ] {
        let e = reduce_keys(&clip, &settings).unwrap_err().to_string();
        assert!(e.contains("'moves'"), "{e}");
    }
}
