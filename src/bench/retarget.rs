//! The `retarget` workload ([`Workload::Retarget`](super::Workload::Retarget)): as
//! `single-clip`, every character a mannequin of other proportions (legs [`LEGS`] times as long)
//! playing the mannequin's clips through a run-time retarget, so that the sample pass samples
//! the source's joints and applies each joint's two constant rotations. Its baseline is
//! `single-clip`, the same crowd on the mannequin's own skeleton; the goal is at most 5 % more
//! instructions per joint-sample in the sample pass.

use crate::error::Result;
use crate::library::{AnimationLibrary, ClipId, SkeletonId};
use crate::mannequin;
use crate::offline::compress::ClipFormat;
use crate::offline::retarget::{BoneMap, RetargetOptions};
use crate::skeleton::Skeleton;

/// How much longer the retargeted character's legs are than the mannequin's.
pub const LEGS: f32 = 1.25;

/// The mannequin with the joints below its thighs `legs` times as far from their parents.
pub fn long_legged(legs: f32) -> Result<Skeleton> {
    let m = mannequin::skeleton();
    let thighs: Vec<usize> = ["thigh_l", "thigh_r"].iter().filter_map(|n| m.joint_index(n)).collect();
    let joints = (0..m.joint_count())
        .map(|j| {
            let mut rest = m.rest_pose()[j];
            if thighs.iter().any(|&t| t != j && m.is_descendant(j, t)) {
                rest.translation *= legs;
            }
            (m.joint_names()[j].clone(), m.parents()[j].map(|p| p as usize), rest)
        })
        .collect();
    Skeleton::from_rest_pose("long-legged mannequin", joints)
}

/// The mannequin's library in `format` (as `single-clip` plays it) and the long-legged
/// mannequin retargeted from it by the humanoid profile: the library, its clips and the retargeted skeleton.
///
/// # Errors
/// None in practice: the built-in assets are valid.
pub fn library_in(format: ClipFormat) -> Result<(AnimationLibrary, Vec<ClipId>, SkeletonId)> {
    let (mut builder, source, clips) = mannequin::builder_in(format);
    let m = mannequin::skeleton();
    let target = long_legged(LEGS)?;
    let map = BoneMap::humanoid(&m, &target)?;
    let id = builder.add_retargeted_skeleton(target, source, &map, &RetargetOptions::default())?;
    Ok((builder.build(), clips, id))
}
