//! The humanoid profile: the usual joint names of Mixamo (`mixamorig:` and its numbered
//! variants), the CMU motion-capture takes, the built-in mannequin and a game control rig (the
//! Animated Knight's), each put on one list of
//! humanoid slots, so that [`BoneMap::humanoid`](super::BoneMap::humanoid) maps any two of them.

use crate::skeleton::Skeleton;

/// The humanoid slots, spine first, then each side's arm and leg.
pub const SLOTS: [&str; 22] = [
    "hips",
    "spine",
    "chest",
    "upper_chest",
    "neck",
    "head",
    "left_shoulder",
    "left_upper_arm",
    "left_lower_arm",
    "left_hand",
    "right_shoulder",
    "right_upper_arm",
    "right_lower_arm",
    "right_hand",
    "left_upper_leg",
    "left_lower_leg",
    "left_foot",
    "left_toes",
    "right_upper_leg",
    "right_lower_leg",
    "right_foot",
    "right_toes",
];

/// One naming convention: a joint whose presence identifies it, and each slot's joint name
/// ("" where the convention has none).
struct Convention {
    name: &'static str,
    marker: &'static str,
    names: [&'static str; 22],
}

/// Tried in order: the CMU takes also have a `Hips`, so they come before Mixamo.
const CONVENTIONS: [Convention; 4] = [
    Convention {
        name: "CMU motion capture",
        marker: "LowerBack",
        names: [
            "Hips",
            "LowerBack",
            "Spine",
            "Spine1",
            "Neck",
            "Head",
            "LeftShoulder",
            "LeftArm",
            "LeftForeArm",
            "LeftHand",
            "RightShoulder",
            "RightArm",
            "RightForeArm",
            "RightHand",
            "LeftUpLeg",
            "LeftLeg",
            "LeftFoot",
            "LeftToeBase",
            "RightUpLeg",
            "RightLeg",
            "RightFoot",
            "RightToeBase",
        ],
    },
    Convention {
        name: "Mixamo",
        marker: "Hips",
        names: [
            "Hips",
            "Spine",
            "Spine1",
            "Spine2",
            "Neck",
            "Head",
            "LeftShoulder",
            "LeftArm",
            "LeftForeArm",
            "LeftHand",
            "RightShoulder",
            "RightArm",
            "RightForeArm",
            "RightHand",
            "LeftUpLeg",
            "LeftLeg",
            "LeftFoot",
            "LeftToeBase",
            "RightUpLeg",
            "RightLeg",
            "RightFoot",
            "RightToeBase",
        ],
    },
    Convention {
        name: "the built-in mannequin",
        marker: "spine_01",
        names: [
            "pelvis",
            "spine_01",
            "spine_02",
            "spine_03",
            "neck",
            "head",
            "clavicle_l",
            "upperarm_l",
            "lowerarm_l",
            "hand_l",
            "clavicle_r",
            "upperarm_r",
            "lowerarm_r",
            "hand_r",
            "thigh_l",
            "calf_l",
            "foot_l",
            "ball_l",
            "thigh_r",
            "calf_r",
            "foot_r",
            "ball_r",
        ],
    },
    // A game rig of control bones (the Animated Knight of `assets/knight`): its pelvis and its
    // spine hang side by side from `body_ctrl`, and its arms from `torso_ctrl`, so the hips slot
    // is `body_ctrl`, the one joint above all the others (the pelvis keeps its rest under it).
    Convention {
        name: "a control rig (body_ctrl, torso_ctrl)",
        marker: "torso_ctrl",
        names: [
            "body_ctrl",
            "spine_1",
            "spine_2",
            "spine_3",
            "neck",
            "skull",
            "",
            "upper_arm_l",
            "lower_arm_l",
            "palm_l",
            "",
            "upper_arm_r",
            "lower_arm_r",
            "palm_r",
            "thigh_l",
            "shin_l",
            "foot_l",
            "toes_l",
            "thigh_r",
            "shin_r",
            "foot_r",
            "toes_r",
        ],
    },
];

/// A joint name without a namespace prefix (`mixamorig:Hips`, `mixamorig1:Hips` → `Hips`).
fn bare(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

/// The index of `skeleton`'s joint whose bare name is `name`.
fn find(skeleton: &Skeleton, name: &str) -> Option<usize> {
    skeleton.joint_names().iter().position(|n| bare(n) == name)
}

/// The convention `skeleton` follows (its name) and each slot's joint there, or `None` when it
/// follows none of them.
pub fn slots(skeleton: &Skeleton) -> Option<(&'static str, [Option<usize>; 22])> {
    let convention = CONVENTIONS.iter().find(|c| find(skeleton, c.marker).is_some())?;
    let mut joints = [None; 22];
    for (slot, name) in joints.iter_mut().zip(convention.names) {
        if !name.is_empty() {
            *slot = find(skeleton, name);
        }
    }
    Some((convention.name, joints))
}
