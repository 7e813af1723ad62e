//! What run-time retargeting puts on the GPU: per skeleton played through a retarget, its
//! [`GpuRetarget`] head, and per joint a [`GpuRetargetJoint`] (the reference's step 2 constants),
//! as the library heap holds them.

use crate::math::Affine;
use glam::Vec4;

/// `GpuRetargetJoint::source` of a target joint no source joint drives: it keeps its rest, with
/// the rotation `a` holds.
pub const RETARGET_UNMAPPED: u32 = u32::MAX;

/// How the heap packs a joint's source, chain length and flags into one word, beside its rest
/// translation (`gpu::library`'s `retarget_units`; WGSL `retarget_joint_at`): the source joint
/// in the bits of this mask (all set: unmapped)...
pub const RETARGET_WORD_SOURCE: u32 = 0xffff;
/// ... the chain length from this bit (8 bits)...
pub const RETARGET_WORD_LINKS_SHIFT: u32 = 16;
/// ... this bit for the retarget root...
pub const RETARGET_WORD_ROOT: u32 = 1 << 24;
/// ... and this one when the joint's rest scale is not 1 (the stage then reads it).
pub const RETARGET_WORD_SCALED: u32 = 1 << 25;

/// `GpuRetargetJoint::flags` bit: the retarget root, whose translation is the source root's
/// model-space position through [`GpuRetarget::root_from_source`].
pub const RETARGET_ROOT: u32 = 1;

/// Joint `j`'s constants of a skeleton played through a retarget. Its local rotation at any time
/// is `a ⊗ L ⊗ b`, `L` the product of the source clip's local rotations of `links` joints, from
/// `source` up its parents (to the child of its nearest mapped ancestor's source joint, or for
/// the retarget root to the source's top joint); its translation and scale are its rest's,
/// except the retarget root's translation. An unmapped joint (`source` [`RETARGET_UNMAPPED`]) keeps its rest with rotation
/// `a` (its rest rotation after any override). 48 bytes, three heap units.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuRetargetJoint {
    /// `Rm_T(parent, rest)⁻¹ ⊗ Rm_S(P, rest)` (xyzw, `P` the source joint above its chain);
    /// an unmapped joint's local rotation.
    pub a: Vec4,
    /// `Rm_S(source, rest)⁻¹ ⊗ Rm_T(joint, rest)` (xyzw).
    pub b: Vec4,
    /// The source joint that drives it, or [`RETARGET_UNMAPPED`].
    pub source: u32,
    /// How many source joints its chain multiplies (at least 1; 0 unmapped).
    pub links: u32,
    /// [`RETARGET_ROOT`] for the retarget root.
    pub flags: u32,
    /// Zero.
    pub _pad: u32,
}

/// A skeleton played through a retarget, as the sample and clock stages read it: its table's
/// head in the heap (one unit per skeleton in the `retargets` section), then its table in the
/// `retarget_joints` section: [`GpuRetarget::root_from_source`] (three units) and three units
/// per joint: `a`, `b`, and its rest translation with a word packing its source, chain length
/// and flags ([`RETARGET_WORD_SOURCE`]).
#[derive(Clone, Debug, PartialEq)]
pub struct GpuRetarget {
    /// The skeleton whose clips it plays.
    pub source: u32,
    /// The source's first entry in the library's parents (its `GpuSkeleton::joint_offset`).
    pub source_joints: u32,
    /// `h_T / h_S`: scales the retarget root's position and the clips' root motion.
    pub ratio: f32,
    /// From the source root's model-space position to the target root's local translation:
    /// `Rm_T(parent_T(root), rest)⁻¹ · (h_T / h_S)`.
    pub root_from_source: Affine,
    /// Per target joint.
    pub joints: Vec<GpuRetargetJoint>,
}
