//! The builder's unit tests.

use super::*;
use crate::clip::JointTrack;
use crate::math::Transform;

fn skel() -> Skeleton {
    Skeleton::from_rest_pose(
        "s",
        vec![
            ("root".into(), None, Transform::IDENTITY),
            ("arm".into(), Some(0), Transform::from_translation(Vec3::Y)),
        ],
    )
    .unwrap()
}

fn clip(tracks: Vec<JointTrack>) -> Clip {
    Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: "c".into(),
        duration: 1.0,
        looping: true,
        tracks,
    }
}

/// A skeleton of `parents` (each before its children).
fn tree(parents: &[Option<usize>]) -> Skeleton {
    let joints = parents
        .iter()
        .enumerate()
        .map(|(k, &p)| (format!("j{k}"), p, Transform::from_translation(Vec3::Y)))
        .collect();
    Skeleton::from_rest_pose("t", joints).unwrap()
}

#[test]
fn the_levels_list_each_fused_joint_once_by_depth_and_nothing_past_the_fused_joints() {
    // Two roots, branches of different depths, a joint whose parent comes three before it.
    let branching = tree(&[None, Some(0), None, Some(1), Some(0), Some(3), Some(2), Some(4)]);
    assert_eq!(branching.depths(), [0, 1, 0, 2, 1, 3, 1, 2]);
    assert_eq!(branching.level_widths(), [2, 3, 2, 1]);
    assert_eq!(branching.depth_order(), [0, 2, 1, 4, 6, 3, 7, 5]);
    // A chain longer than the fused path animates: only its first joints, one per level.
    let fused = crate::layout::MAX_FUSED_JOINTS as usize;
    let n = fused + 5;
    let chain = tree(&(0..n).map(|k| k.checked_sub(1)).collect::<Vec<_>>());
    let mut b = LibraryBuilder::new();
    b.add_skeleton(branching.clone());
    b.add_skeleton(chain);
    let lib = b.build();
    let levels = lib.levels();
    assert_eq!(levels.len(), lib.parents().len());
    let fields = |e: u32| (e & 0xff, (e >> 8) & 0xff, e >> 16);
    let first: Vec<(u32, u32, u32)> = levels[..8].iter().map(|&e| fields(e)).collect();
    // Levels 0..4 start at entries 0, 2, 5 and 7; past the deepest, at the count, 8.
    assert_eq!(
        first,
        [
            (0, 0, 0),
            (2, 0, 2),
            (1, 1, 5),
            (4, 1, 7),
            (6, 1, 8),
            (3, 2, 8),
            (7, 2, 8),
            (5, 3, 8)
        ]
    );
    let chain_levels = &levels[8..];
    for (k, &e) in chain_levels[..fused].iter().enumerate() {
        assert_eq!(fields(e), (k as u32, k as u32, k as u32));
    }
    assert!(chain_levels[fused..].iter().all(|&e| e == 0));
    // The heap's section holds them where the layout says.
    let heap = crate::gpu::LibraryHeap::new(&lib);
    let at = |k: usize| heap.heap[heap.layout.levels as usize + k / 4][k % 4];
    assert!((0..levels.len()).all(|k| at(k) == levels[k]));
}

#[test]
fn missing_channels_hold_the_rest_pose_and_constants_are_stored_once() {
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(skel());
    let c = b
        .add_clip(
            s,
            &clip(vec![JointTrack {
                joint: "arm".into(),
                rotation: Some(Track::linear([(0.0, Quat::IDENTITY), (1.0, Quat::IDENTITY)])),
                ..Default::default()
            }]),
        )
        .unwrap();
    let lib = b.build();
    assert_eq!(lib.clips[c.index() as usize].joint_count, 2);
    assert_eq!(lib.tracks.len(), 6);
    assert!(lib.tracks.iter().all(|t| t.key_count == 1));
    assert_eq!(
        lib.values[lib.tracks[3].value_offset as usize],
        Vec4::new(0.0, 1.0, 0.0, 0.0)
    );
}

#[test]
fn bad_clips_are_rejected_with_names_and_leave_the_library_unchanged() {
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(skel());
    let cases: Vec<(JointTrack, &str)> = vec![
        (
            JointTrack {
                joint: "tail".into(),
                ..Default::default()
            },
            "'tail'",
        ),
        (
            JointTrack {
                joint: "arm".into(),
                translation: Some(Track::linear([(0.5, Vec3::ZERO), (0.2, Vec3::ONE)])),
                ..Default::default()
            },
            "not after",
        ),
        (
            JointTrack {
                joint: "arm".into(),
                translation: Some(Track::linear([(0.0, Vec3::ZERO), (0.2, Vec3::NAN)])),
                ..Default::default()
            },
            "not finite",
        ),
        (
            JointTrack {
                joint: "arm".into(),
                rotation: Some(Track::linear([(0.0, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0))])),
                ..Default::default()
            },
            "zero-length",
        ),
        (
            JointTrack {
                joint: "arm".into(),
                scale: Some(Track {
                    interpolation: Interpolation::CubicSpline,
                    times: vec![0.0],
                    values: vec![Vec3::ONE],
                }),
                ..Default::default()
            },
            "need 3 values",
        ),
    ];
    for (track, expect) in cases {
        let e = b.add_clip(s, &clip(vec![track])).unwrap_err().to_string();
        assert!(e.contains("clip 'c'") && e.contains(expect), "{e}");
    }
    let mut zero = clip(vec![]);
    zero.duration = 0.0;
    assert!(b.add_clip(s, &zero).unwrap_err().to_string().contains("duration"));
    let other = LibraryBuilder::new().add_skeleton(skel());
    let e = b.add_clip(other, &clip(vec![])).unwrap_err().to_string();
    assert!(e.contains("skeleton 0 belongs to another library"), "{e}");
    let lib = b.build();
    assert!(
        lib.clips.is_empty() && lib.tracks.is_empty() && lib.values.len() == 6,
        "only the rest pose"
    );
}
