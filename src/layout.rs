//! Data shared with WGSL, byte for byte. Each struct names the WGSL struct it mirrors in
//! `shaders/shared/types.wgsl`; `tests/shaders.rs` checks sizes and offsets against naga's layout.

use crate::math::Affine;
use glam::Vec4;

/// Workgroup size of every per-instance compute stage (`clock`, `local_to_model`), and the number
/// of threads per instance of the per-joint stages (`sample`, `palette`). Matches
/// `const WORKGROUP_SIZE` in `shaders/shared/types.wgsl`.
pub const WORKGROUP_SIZE: u32 = 64;

/// Loop mode code: play once, clamp to `[0, T]`.
pub const LOOP_ONCE: u32 = 0;
/// Loop mode code: loop `loop_count` times, clamp to `[0, N·T]` then `mod T`.
pub const LOOP_REPEAT: u32 = 1;
/// Loop mode code: loop forever, `mod T`.
pub const LOOP_FOREVER: u32 = 2;

/// Per-frame uniform: the only data an ordinary frame sends. WGSL `Frame`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuFrame {
    /// Seconds since the last frame.
    pub dt: f32,
    /// Number of live instances.
    pub instance_count: u32,
    /// Padding.
    pub _pad: [u32; 2],
}

/// A clip in the runtime library. WGSL `ClipInfo`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuClip {
    /// Index of the skeleton the clip animates.
    pub skeleton: u32,
    /// Joints of that skeleton.
    pub joint_count: u32,
    /// First track: joint `j`'s channel `c` (0 translation, 1 rotation, 2 scale) is track
    /// `track_offset + 3 j + c`.
    pub track_offset: u32,
    /// Bit 0: looping.
    pub flags: u32,
    /// Duration in seconds.
    pub duration: f32,
    /// Padding.
    pub _pad: [u32; 3],
}

/// One channel's keys. WGSL `Track`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuTrack {
    /// First key time in the `times` array.
    pub time_offset: u32,
    /// Number of keys (≥ 1).
    pub key_count: u32,
    /// First value in the `values` array (three per key for cubic splines: in, value, out).
    pub value_offset: u32,
    /// [`crate::Interpolation::gpu_code`].
    pub interpolation: u32,
}

/// A skeleton in the runtime library. WGSL `SkeletonInfo`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuSkeleton {
    /// Number of joints.
    pub joint_count: u32,
    /// First entry in the `parents` and `inverse_binds` arrays.
    pub joint_offset: u32,
    /// Padding.
    pub _pad: [u32; 2],
}

/// An instance's parameters, written by the CPU only when they change. WGSL `Instance`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuInstance {
    /// `world_from_model`.
    pub world: Affine,
    /// Clip index in the library.
    pub clip: u32,
    /// Skeleton index (the clip's).
    pub skeleton: u32,
    /// First entry of this instance's joints in the pose and palette buffers.
    pub joint_offset: u32,
    /// Joints (the skeleton's).
    pub joint_count: u32,
    /// Playback rate: negative plays backward, 0 pauses.
    pub rate: f32,
    /// `LOOP_*`.
    pub loop_mode: u32,
    /// Loops before stopping, with [`LOOP_REPEAT`].
    pub loop_count: u32,
    /// Per-instance colour, RGBA8 (used by the built-in renderer).
    pub tint: u32,
}
const _: () = assert!(std::mem::size_of::<GpuInstance>() == 80);

/// An instance's clock, advanced by the `clock` stage. WGSL `Clock`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuClock {
    /// Local time: in `[0, T]` (once), `[0, N·T]` (repeat) or `[0, T)` (forever).
    pub time: f32,
    /// Time within the clip, where it is sampled.
    pub sample_time: f32,
    /// Normalized time, `sample_time / T`.
    pub phase: f32,
    /// Padding.
    pub _pad: u32,
}

/// A local joint pose as the `sample` stage writes it. WGSL `LocalPose`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct LocalPose {
    /// xyz: translation; w: 0.
    pub translation: Vec4,
    /// Unit quaternion (x, y, z, w).
    pub rotation: Vec4,
    /// xyz: scale; w: 0.
    pub scale: Vec4,
}
const _: () = assert!(std::mem::size_of::<LocalPose>() == 48);

impl Default for LocalPose {
    fn default() -> Self {
        Self {
            translation: Vec4::ZERO,
            rotation: Vec4::W,
            scale: Vec4::new(1.0, 1.0, 1.0, 0.0),
        }
    }
}
