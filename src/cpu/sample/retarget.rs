//! The sample stage's run-time retarget: a character of a skeleton played through a retarget
//! samples its source's joints and turns them by its constants (the reference's step 2). WGSL:
//! `retarget_joint_at` and `played_joint` in `shaders/sample.wgsl`.

use super::{SampleKeys, rest_pose, sample_joint};
use crate::layout::{GpuClip, GpuSkeleton, LocalPose, RETARGET_ROOT, RETARGET_UNMAPPED};
use crate::library::AnimationLibrary;
use crate::math::{Affine, quat_mul, quat_rotate};
use glam::{Vec3, Vec4};

/// One joint's constants of a character played through a retarget (WGSL `RetargetedJoint`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RetargetedJoint {
    a: Vec4,
    b: Vec4,
    source: u32,
    links: u32,
    /// The retarget root's `root_from_source`.
    root: Option<Affine>,
    /// The source's first entry in the library's parents.
    parents: u32,
    rest: LocalPose,
}

/// Joint `j`'s constants for a character of skeleton `skeleton` (`skel` its record), or `None`
/// when it plays its own skeleton's clips. WGSL `retarget_joint_at`.
pub(crate) fn retarget_joint_at(
    lib: &AnimationLibrary,
    skeleton: u32,
    skel: &GpuSkeleton,
    j: u32,
) -> Option<RetargetedJoint> {
    let r = lib.retarget_at(skeleton)?;
    let e = r.joints.get(j as usize)?;
    Some(RetargetedJoint {
        a: e.a,
        b: e.b,
        source: e.source,
        links: e.links,
        root: (e.flags & RETARGET_ROOT != 0).then_some(r.root_from_source),
        parents: r.source_joints,
        rest: rest_pose(lib, skel, j),
    })
}

/// Joint `j` of a character playing `clip` at time `t` (`keys`: the sample's): the clip's joint
/// `j`, or with `retarget`, the chain of its source joints sampled, multiplied and turned by its
/// constants (`a ⊗ L ⊗ b`, not normalized again: the blend normalizes), with its rest translation
/// and scale, the retarget root's translation the chain's position through `root_from_source`, an
/// unmapped joint its rest with rotation `a`.
/// WGSL `played_joint`.
pub(crate) fn played_joint(
    lib: &AnimationLibrary,
    clip: &GpuClip,
    j: u32,
    t: f32,
    keys: &SampleKeys,
    retarget: Option<&RetargetedJoint>,
) -> LocalPose {
    let Some(r) = retarget else {
        return sample_joint(lib, clip, j, t, keys);
    };
    if r.source == RETARGET_UNMAPPED {
        return LocalPose {
            rotation: r.a,
            ..r.rest
        };
    }
    let mut k = r.source;
    let mut q = Vec4::W;
    let mut position = Vec3::ZERO;
    for n in 0..r.links {
        if n > 0 {
            let parent = lib.parents().get((r.parents + k) as usize).copied().unwrap_or(0);
            k = parent.max(0) as u32;
        }
        let s = sample_joint(lib, clip, k, t, keys);
        if r.root.is_some() {
            position = s.translation.truncate() + quat_rotate(s.rotation, s.scale.truncate() * position);
        }
        q = if n == 0 { s.rotation } else { quat_mul(s.rotation, q) };
    }
    let translation = match &r.root {
        Some(m) => m.transform_point3(position).extend(0.0),
        None => r.rest.translation,
    };
    LocalPose {
        translation,
        rotation: quat_mul(quat_mul(r.a, q), r.b),
        scale: r.rest.scale,
    }
}
