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
/// up to the farthest that helps (a spine), each an ancestor of the one before. Each turns a
/// share of what remains toward the target; the first, last in the order they are solved, turns
/// the rest, so `forward` from `offset` points at the target.
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
    /// The share each joint but the first turns, in [0, 1] (ozz's look-at `joint_weight`).
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
    /// A two-bone chain's `end` planted on the ground under it: the GPU puts it as high above
    /// the ground function's height (`AnimatorDesc::ground`) as the clip holds it above the
    /// character's own floor (its world origin's height), and lowers the chain's `pelvis` to
    /// the lowest such foot.
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

fn unit(v: Vec3, what: &str) -> Result<Vec3, String> {
    let n = v.normalize_or_zero();
    if !v.is_finite() || n == Vec3::ZERO || !n.is_finite() {
        return Err(format!("{what} {v} must be finite and not zero"));
    }
    Ok(n)
}

/// Checks `chain` against `skeleton` and normalizes its axes ([`crate::Skeleton::add_ik_chain`]
/// documents what is refused).
pub(crate) fn validate_chain(skeleton: &crate::Skeleton, mut chain: IkChain) -> Result<IkChain, String> {
    let n = skeleton.joint_count();
    let names = skeleton.joint_names();
    let joint = |j: usize, role: &str| -> Result<(), String> {
        if j < n {
            Ok(())
        } else {
            Err(format!("its {role} joint {j} does not exist ({n} joints)"))
        }
    };
    let rest = skeleton.rest_model_matrices();
    let bone = |from: usize, to: usize| -> Result<(), String> {
        if !skeleton.is_descendant(to, from) || to == from {
            return Err(format!(
                "'{}' is not below '{}': the joints are not a chain",
                names[to], names[from]
            ));
        }
        let d = rest[to].w_axis.truncate() - rest[from].w_axis.truncate();
        if d.length() <= 0.0 || d.is_nan() {
            return Err(format!(
                "the bone from '{}' to '{}' has zero length in the rest pose",
                names[from], names[to]
            ));
        }
        Ok(())
    };
    let angle = |a: f32, what: &str| -> Result<(), String> {
        if a.is_finite() {
            Ok(())
        } else {
            Err(format!("{what} {a} is not finite"))
        }
    };
    match &mut chain.kind {
        IkKind::TwoBone(c) => {
            joint(c.start, "start")?;
            joint(c.mid, "mid")?;
            joint(c.end, "end")?;
            bone(c.start, c.mid)?;
            bone(c.mid, c.end)?;
            c.mid_axis = unit(c.mid_axis, "mid axis")?;
            c.pole = unit(c.pole, "pole")?;
            angle(c.twist, "twist")?;
            if !(0.0..=1.0).contains(&c.soften) {
                return Err(format!("soften {} is outside [0, 1]", c.soften));
            }
            if let Some(p) = c.pelvis {
                joint(p, "pelvis")?;
                if !skeleton.is_descendant(c.start, p) {
                    return Err(format!(
                        "its pelvis '{}' is not above its start '{}'",
                        names[p], names[c.start]
                    ));
                }
                let other = skeleton.ik_chains().iter().find_map(|o| match &o.kind {
                    IkKind::TwoBone(t) => t.pelvis.filter(|&q| q != p),
                    IkKind::Aim(_) => None,
                });
                if let Some(q) = other {
                    return Err(format!(
                        "its pelvis '{}' is not '{}', the one other chains lower",
                        names[p], names[q]
                    ));
                }
            }
        }
        IkKind::Aim(c) => {
            if c.joints.is_empty() || c.joints.len() > MAX_AIM_JOINTS {
                return Err(format!(
                    "{} joints: an aim chain turns 1 to {MAX_AIM_JOINTS}",
                    c.joints.len()
                ));
            }
            for (i, &j) in c.joints.iter().enumerate() {
                joint(j, "aim")?;
                if i > 0 {
                    bone(j, c.joints[i - 1])?;
                }
            }
            c.forward = unit(c.forward, "forward")?;
            c.up = unit(c.up, "up")?;
            c.pole = unit(c.pole, "pole")?;
            if !c.offset.is_finite() {
                return Err(format!("offset {} is not finite", c.offset));
            }
            angle(c.twist, "twist")?;
            if !(0.0..=1.0).contains(&c.joint_weight) {
                return Err(format!("joint weight {} is outside [0, 1]", c.joint_weight));
            }
        }
    }
    Ok(chain)
}
