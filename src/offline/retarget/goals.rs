//! The reference's step 4: foot and hand goals. After the rotations and the root's position, a
//! chain's end is moved to where its source joint is, relative to the retarget root and scaled by
//! `h_T / h_S`, by the two-bone IK (ozz-animation's semantics, the f64 solver of
//! [`crate::reference::ik`]), so that a planted source foot stays planted on a character of
//! other proportions.

use super::humanoid;
use crate::error::Error;
use crate::ik::TwoBoneJob;
use crate::math::Affine;
use crate::reference::{self, TransformF64};
use crate::skeleton::Skeleton;
use glam::{DMat4, DQuat, DVec3};

/// One goal: the target chain's start, mid and end joints and the source joint of its end.
#[derive(Clone, Copy, Debug)]
pub(super) struct Goal {
    start: usize,
    mid: usize,
    end: usize,
    source: usize,
}

impl Goal {
    /// The goal on target joint `end` (its parent the mid joint, their parent the start), whose
    /// source joint the map gives, or an error naming the joint.
    pub(super) fn new(
        target: &Skeleton,
        map: &[Option<usize>],
        end: &str,
        fail: &dyn Fn(String) -> Error,
    ) -> crate::Result<Self> {
        let name = target.name();
        let e = target.joint_index(end).ok_or_else(|| {
            fail(format!(
                "a goal names joint '{end}', which skeleton '{name}' does not have"
            ))
        })?;
        let parent = |j: usize| target.parents()[j].map(|p| p as usize);
        let (Some(mid), Some(start)) = (parent(e), parent(e).and_then(parent)) else {
            return Err(fail(format!(
                "goal joint '{end}' of skeleton '{name}' needs a parent and a grandparent (a two-bone chain)"
            )));
        };
        let source = map[e].ok_or_else(|| {
            fail(format!(
                "goal joint '{end}' of skeleton '{name}' is not mapped: no source joint to follow"
            ))
        })?;
        Ok(Self {
            start,
            mid,
            end: e,
            source,
        })
    }

    /// The chain's joints, start first.
    pub(super) fn joints(&self) -> [usize; 3] {
        [self.start, self.mid, self.end]
    }
}

/// The target joints the humanoid profile puts on a skeleton's feet (left, right), for
/// [`super::RetargetOptions::with_goal`]; `None` when the skeleton follows none of the profile's
/// conventions or lacks a foot.
#[must_use]
pub fn humanoid_feet(skeleton: &Skeleton) -> Option<[String; 2]> {
    humanoid_pair(skeleton, "left_foot", "right_foot")
}

/// The target joints the humanoid profile puts on a skeleton's hands (left, right).
#[must_use]
pub fn humanoid_hands(skeleton: &Skeleton) -> Option<[String; 2]> {
    humanoid_pair(skeleton, "left_hand", "right_hand")
}

fn humanoid_pair(skeleton: &Skeleton, left: &str, right: &str) -> Option<[String; 2]> {
    let (_, slots) = humanoid::slots(skeleton)?;
    let joint = |slot: &str| {
        let k = humanoid::SLOTS.iter().position(|s| *s == slot)?;
        slots[k].map(|j| skeleton.joint_names()[j].clone())
    };
    Some([joint(left)?, joint(right)?])
}

/// The pole and bending axis of a chain as it stands: the pole along the mid joint's offset from
/// the start-to-end line (model space), the axis perpendicular to the two bones in the mid
/// joint's frame; `None` where the chain is straight.
fn bend(model: &[DMat4], g: &Goal) -> Option<(DVec3, DVec3)> {
    let p = |j: usize| model[j].w_axis.truncate();
    let (start, mid, end) = (p(g.start), p(g.mid), p(g.end));
    let line = (end - start).normalize_or_zero();
    let pole = ((mid - start) - line * (mid - start).dot(line)).normalize_or_zero();
    let axis = (mid - start).cross(end - mid).normalize_or_zero();
    if pole == DVec3::ZERO || axis == DVec3::ZERO {
        return None;
    }
    let mid_rotation = model[g.mid].to_scale_rotation_translation().1;
    Some((pole, (mid_rotation.inverse() * axis).normalize()))
}

/// Step 4 on `pose` (the target's local pose after steps 1 and 3, updated in place): each goal's
/// end moved to `root_T + (end_S − root_S) · ratio` (`source_model`: the source's model matrices,
/// `root`: the (target, source) retarget root) by the two-bone IK at full weight, no softening,
/// bending in the plane the chain stands in (or, where it is straight, the rest's).
pub(super) fn solve(
    target: &Skeleton,
    rest_model: &[DMat4],
    goals: &[Goal],
    pose: &mut [TransformF64],
    source_model: &[DMat4],
    root: (usize, usize),
    ratio: f64,
) {
    for g in goals {
        let model = reference::local_to_model(target, pose);
        let Some((pole, mid_axis)) = bend(&model, g).or_else(|| bend(rest_model, g)) else {
            continue;
        };
        let offset = source_model[g.source].w_axis.truncate() - source_model[root.1].w_axis.truncate();
        let goal = model[root.0].w_axis.truncate() + offset * ratio;
        let affine = |j: usize| Affine::from_mat4(&model[j].as_mat4());
        let job = TwoBoneJob {
            start: affine(g.start),
            mid: affine(g.mid),
            end: affine(g.end),
            target: goal.as_vec3(),
            pole: pole.as_vec3(),
            mid_axis: mid_axis.as_vec3(),
            twist: 0.0,
            soften: 1.0,
            weight: 1.0,
        };
        let (q_start, q_mid, _) = reference::two_bone_ik(&job);
        // Corrections in each joint's own frame: its local rotation times the correction.
        let turn = |r: DQuat, c: DQuat| (r * c).normalize();
        pose[g.mid].rotation = turn(pose[g.mid].rotation, q_mid);
        pose[g.start].rotation = turn(pose[g.start].rotation, q_start);
    }
}
