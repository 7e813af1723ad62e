//! The checked forms of the sample stage's per-joint functions, public as `cpu::layered_joint`
//! and `cpu::sample_joint`.

use super::check_list;
use crate::cpu::checks::instance_error;
use crate::error::Result;
use crate::layout::{BlendList, GpuClip, GpuSkeleton, LocalPose, MAX_BLEND_CLIPS, SNAPSHOT_CLIP};
use crate::library::AnimationLibrary;
use glam::Vec4;

/// Joint `j` of an instance of skeleton `skel` (one of the library's; one played through a
/// retarget, retargeted): the base blend, then each layer in order; returns the local pose and the mesh-space rotation delta for
/// `local_to_model`. Snapshot samples read `history[snapshot_slot]` (the pose history's
/// snapshots). WGSL `layered_joint`.
///
/// Errors: `skel` is not one of the library's skeletons, `j` is not one of its joints, a sample's
/// clip or a layer's mask does not exist or has fewer joints, a snapshot sample with
/// `snapshot_slot` past the end of `history`.
pub fn layered_joint(
    lib: &AnimationLibrary,
    l: &BlendList,
    skel: &GpuSkeleton,
    j: u32,
    snapshot_slot: u32,
    history: &[LocalPose],
) -> Result<(LocalPose, Vec4)> {
    let Some(skeleton) = lib.gpu_skeletons().iter().position(|s| s == skel) else {
        return Err(instance_error(0, "the skeleton is not one of the library's".into()));
    };
    let skeleton = skeleton as u32;
    if j >= skel.joint_count {
        return Err(instance_error(
            0,
            format!("joint {j} does not exist (the skeleton has {})", skel.joint_count),
        ));
    }
    check_list(lib, 0, skeleton, j + 1, l)?;
    let snapshots = l.samples[..l.count.min(MAX_BLEND_CLIPS) as usize]
        .iter()
        .any(|e| e.clip == SNAPSHOT_CLIP);
    if snapshots && snapshot_slot as usize >= history.len() {
        return Err(instance_error(
            0,
            format!(
                "snapshot slot {snapshot_slot} lies beyond the {} poses of history given",
                history.len()
            ),
        ));
    }
    Ok(super::layered_joint(
        lib,
        &super::KeyedList::new(lib, l),
        skel,
        j,
        snapshot_slot,
        history,
        0,
        super::retarget::retarget_joint_at(lib, skeleton, skel, j).as_ref(),
    ))
}

/// Joint `j` of `clip` (one of the library's clips) at time `t`. WGSL `sample_joint`.
///
/// Errors: `clip` is not one of the library's, or has no joint `j`.
pub fn sample_joint(lib: &AnimationLibrary, clip: &GpuClip, j: u32, t: f32) -> Result<LocalPose> {
    if !lib.clips().contains(clip) {
        return Err(instance_error(0, "the clip is not one of the library's".into()));
    }
    if j >= clip.joint_count {
        return Err(instance_error(
            0,
            format!("joint {j} does not exist (the clip animates {})", clip.joint_count),
        ));
    }
    Ok(super::sample_joint(lib, clip, j, t, &super::SampleKeys::default()))
}
