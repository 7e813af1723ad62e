//! What IK and sockets put on the GPU: the chains and sockets a skeleton declares, as the
//! library heap holds them, and the constants of a character's IK goals.

use crate::math::Affine;
use glam::{UVec4, Vec3};

/// The most IK chains a skeleton declares ([`crate::ik::IkChain`]); each character's goals take
/// this many slots of its instance.
pub const MAX_IK_CHAINS: u32 = 4;

/// The most joints an aim chain turns.
pub const MAX_AIM_JOINTS: u32 = 4;

/// `GpuInstance::ik` bit of chain 0; chain `k` is `IK_ON << k`.
pub const IK_ON: u32 = 1;

/// Where an IK goal's target is (`GpuInstance::ik`, two bits per chain from bit 8).
pub mod ik_target {
    /// `xyz` of the goal is a point in the character's model space.
    pub const MODEL: u32 = 0;
    /// `xyz` is a point in the world.
    pub const WORLD: u32 = 1;
    /// The frame's shared point (`GpuFrame::look_at`), in the world.
    pub const LOOK_AT: u32 = 2;
    /// The chain's end, planted on the ground function's height.
    pub const GROUND: u32 = 3;
}

/// IK chain kinds (`GpuIkChain::kind`).
pub mod ik_kind {
    /// No chain in this slot.
    pub const NONE: u32 = 0;
    /// A two-bone chain.
    pub const TWO_BONE: u32 = 1;
    /// An aim chain.
    pub const AIM: u32 = 2;
}

/// No joint (a two-bone chain's pelvis when it lowers none).
pub const NO_JOINT: u32 = u32::MAX;

wgsl_struct! {
    /// An IK chain as the GPU reads it ([`crate::ik::IkChain`]), six heap units. WGSL `IkChain`
    /// (read by `ik_chain` in `shaders/shared/library.wgsl`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuIkChain as "IkChain" {
        /// `ik_kind::*`.
        pub kind: u32,
        /// Joints in use: 3 for a two-bone chain, 1 to [`MAX_AIM_JOINTS`] for an aim chain.
        pub joint_count: u32,
        /// A two-bone chain's pelvis, or [`NO_JOINT`].
        pub pelvis: u32,
        /// Padding.
        pub _pad_a: u32,
        /// Two-bone: start, mid, end (and [`NO_JOINT`]); aim: the joints from the aiming one up.
        pub joints: UVec4,
        /// Two-bone: the mid axis; aim: forward. Unit.
        pub axis: Vec3,
        /// Two-bone: soften; aim: the share of each joint but the last.
        pub ratio: f32,
        /// The pole, model space, unit.
        pub pole: Vec3,
        /// Twist, radians.
        pub twist: f32,
        /// Aim: the offset.
        pub offset: Vec3,
        /// Padding.
        pub _pad_b: f32,
        /// Aim: the first joint's up, unit.
        pub up: Vec3,
        /// Padding.
        pub _pad_c: f32,
    }
}
const _: () = assert!(std::mem::size_of::<GpuIkChain>() == 96);

/// The most sockets a skeleton has. Each character's socket matrices take this many slots.
pub const MAX_SOCKETS: u32 = 4;

wgsl_struct! {
    /// A socket as the GPU reads it: the joint it follows and its offset from that joint
    /// (`joint_from_socket`). WGSL `Socket`.
    #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuSocket as "Socket" {
        /// The joint, an index into the skeleton's joints.
        pub joint: u32,
        /// Padding.
        pub _pad: [u32; 3],
        /// `joint_from_socket`.
        pub offset: Affine,
    }
}
const _: () = assert!(std::mem::size_of::<GpuSocket>() == 64);
