//! Inverse kinematics: the chains a skeleton declares ([`IkChain`]), the goals a character gives
//! them ([`IkGoal`]) and the solvers' inputs ([`TwoBoneJob`], [`AimJob`]).
//!
//! The solvers follow ozz-animation's `IKTwoBoneJob` and `IKAimJob`: they take model-space
//! matrices and return a rotation correction per joint, in the joint's own frame. The GPU applies
//! a correction `c` of joint `k` after the hierarchy is propagated, as `model[k] · R(c)`, and
//! carries every joint below `k` with it (`model[d] ← model[k] · R(c) · model[k]⁻¹ · model[d]`),
//! which is ozz's "multiply the local rotation, then propagate again" for any joint whose own
//! scale is uniform, and puts the end on the target for any scale. WGSL:
//! `shaders/shared/ik_solve.wgsl`; CPU mirror: [`crate::cpu::two_bone_ik`],
//! [`crate::cpu::aim_ik`]; f64 oracle: [`crate::reference::two_bone_ik`],
//! [`crate::reference::aim_ik`].

use crate::math::Affine;
use glam::Vec3;

/// The most IK chains a skeleton may declare. Each character's goals take this many slots.
pub const MAX_IK_CHAINS: usize = crate::layout::MAX_IK_CHAINS as usize;

/// The most joints an aim chain may turn.
pub const MAX_AIM_JOINTS: usize = crate::layout::MAX_AIM_JOINTS as usize;

/// A two-bone chain (a leg, an arm): three joints, each an ancestor of the next (not necessarily
/// parent and child), bent at `mid` so that `end` reaches the target.
#[derive(Clone, Debug, PartialEq)]
pub struct TwoBoneIk {
    /// The chain's first joint (a hip, a shoulder).
    pub start: usize,
    /// The joint that bends (a knee, an elbow): a descendant of `start`.
    pub mid: usize,
    /// The joint put on the target (an ankle, a wrist): a descendant of `mid`.
    pub end: usize,
    /// The axis `mid` bends about, in `mid`'s frame (normalized when added); the chain bends the
    /// way a positive rotation about it turns `end`.
    pub mid_axis: Vec3,
    /// Where the chain's plane points (a knee's forward), in model space.
    pub pole: Vec3,
    /// Turns the chain's plane about the start-to-target line, radians.
    pub twist: f32,
    /// From this fraction of the chain's length on, the reach is softened so that the leg never
    /// snaps straight (1: no softening; ozz's `soften`).
    pub soften: f32,
    /// With a ground goal ([`IkTarget::Ground`]): the joint lowered (with everything below it)
    /// so that the lowest planted foot reaches its ground, as a pelvis; `None` lowers nothing.
    /// Every chain that names one names the same.
    pub pelvis: Option<usize>,
}

/// An aim chain (a head looking, a weapon aimed): joints listed from the one that aims (a head)
/// up to the farthest that helps (a spine), each an ancestor of the one before, solved in that
/// order (ozz's look-at). Each but the last turns `joint_weight` of what remains toward the
/// target; the last, the farthest, turns the rest, so that `forward` from `offset` points at the
/// target.
#[derive(Clone, Debug, PartialEq)]
pub struct AimIk {
    /// The joints, from the aiming one to its farthest ancestor used (at most
    /// [`MAX_AIM_JOINTS`]).
    pub joints: Vec<usize>,
    /// The direction that aims, in the first joint's frame (normalized when added).
    pub forward: Vec3,
    /// Where it aims from (eyes, a muzzle), in the first joint's frame.
    pub offset: Vec3,
    /// The first joint's up, in its frame, kept toward `pole`.
    pub up: Vec3,
    /// Where `up` points, in model space.
    pub pole: Vec3,
    /// Turns about the aim line, radians.
    pub twist: f32,
    /// The share each joint but the last (the farthest) turns, in [0, 1] (ozz's look-at
    /// `joint_weight`).
    pub joint_weight: f32,
}

/// What a chain does.
#[derive(Clone, Debug, PartialEq)]
pub enum IkKind {
    /// Bend two bones.
    TwoBone(TwoBoneIk),
    /// Aim a joint over a chain.
    Aim(AimIk),
}

/// A named IK chain of a skeleton ([`crate::Skeleton::add_ik_chain`]).
#[derive(Clone, Debug, PartialEq)]
pub struct IkChain {
    /// Unique among the skeleton's chains.
    pub name: String,
    /// What it does.
    pub kind: IkKind,
}

/// Where a chain's target is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IkTarget {
    /// A point in the character's model space.
    Model(Vec3),
    /// A point in the world; the GPU brings it into the character's model space each frame (its
    /// world transform may move by root motion).
    World(Vec3),
    /// The animator's shared point, in the world ([`crate::gpu::Controller::set_look_at`]): every
    /// character with this goal looks at the same place, and moving it writes 16 bytes.
    LookAt,
    /// A two-bone chain's `end` planted on the ground function (`AnimatorDesc::ground`). The
    /// character stands on the ground under its root: every joint is lifted by the ground's
    /// height there above the character's floor (its world origin's height), so that a crowd
    /// moved by root motion on flat `y` walks over relief; the end is put as high above the
    /// ground under it as the clip holds it above the floor; and the chain's `pelvis` goes down
    /// by the lowest such correction left, so that a foot over a hollow still reaches. All of
    /// it scales with the goal's weight.
    Ground,
}

/// A character's goal for one of its skeleton's chains ([`crate::gpu::Controller::set_ik_goal`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IkGoal {
    /// Where the target is.
    pub target: IkTarget,
    /// How much of the correction is applied, in [0, 1].
    pub weight: f32,
}

/// A two-bone solve's inputs: ozz's `IKTwoBoneJob`. Matrices and vectors are in model space
/// except `mid_axis` (in `mid`'s frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneJob {
    /// The start joint's model matrix.
    pub start: Affine,
    /// The mid joint's model matrix.
    pub mid: Affine,
    /// The end joint's model matrix.
    pub end: Affine,
    /// The target.
    pub target: Vec3,
    /// The pole vector.
    pub pole: Vec3,
    /// The bending axis, unit, in `mid`'s frame.
    pub mid_axis: Vec3,
    /// Twist about the start-to-target line, radians.
    pub twist: f32,
    /// Soften ratio, [0, 1].
    pub soften: f32,
    /// Weight, [0, 1] (values outside are clamped).
    pub weight: f32,
}

/// An aim solve's inputs: ozz's `IKAimJob`. `target` and `pole` are in model space, the others in
/// the joint's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimJob {
    /// The joint's model matrix.
    pub joint: Affine,
    /// The target.
    pub target: Vec3,
    /// The aiming direction, unit.
    pub forward: Vec3,
    /// Where it aims from.
    pub offset: Vec3,
    /// The joint's up.
    pub up: Vec3,
    /// Where `up` points.
    pub pole: Vec3,
    /// Twist about the aim line, radians.
    pub twist: f32,
    /// Weight, [0, 1] (values outside are clamped).
    pub weight: f32,
}
