//! Where each section of a page's shared buffers starts: the character state's outputs, blend
//! lists and morph weights after its clocks, the palettes' dual quaternions after the palettes.
//! Each section starts on a 256-byte boundary, WebGPU's default storage offset alignment, so
//! that a renderer or a pass of your own can bind one section alone. The frame uniform carries
//! the offsets to the shaders ([`super::GpuFrame`]); [`crate::shaders::Resource::place`] gives
//! them by resource.

use super::{BlendList, GpuClock, GpuOutput};
use crate::math::{Affine, DualQuat};

/// 16-byte units of a [`BlendList`] in the character state (WGSL `BLEND_LIST_UNITS`): its head
/// (count, mesh-space additive flag, inertia bits and time), a unit per layer, a unit per sample.
pub const BLEND_LIST_UNITS: u32 = 1 + super::MAX_LAYERS + super::MAX_BLEND_CLIPS;
const _: () = assert!(BLEND_LIST_UNITS as usize * 16 == size_of::<BlendList>());

/// WebGPU's default `min_storage_buffer_offset_alignment`: every section starts at a multiple.
pub const SECTION_ALIGNMENT: u64 = 256;

/// Byte offset of the outputs ([`GpuOutput`]) in a page's character state buffer of `capacity`
/// instances: after their clocks ([`GpuClock`], 64 bytes each), rounded up to 256 bytes.
#[must_use]
pub const fn outputs_offset(capacity: u32) -> u64 {
    (capacity as u64 * size_of::<GpuClock>() as u64).next_multiple_of(SECTION_ALIGNMENT)
}

/// Byte offset of the blend lists ([`BlendList`], 320 bytes each) in a page's character state
/// buffer of `capacity` instances: after the outputs, rounded up to 256 bytes.
#[must_use]
pub const fn blend_lists_offset(capacity: u32) -> u64 {
    (outputs_offset(capacity) + capacity as u64 * size_of::<GpuOutput>() as u64).next_multiple_of(SECTION_ALIGNMENT)
}

/// Byte offset of the morph weights in a page's character state buffer of `capacity` instances:
/// after the blend lists, rounded up to 256 bytes.
#[must_use]
pub const fn morph_weights_offset(capacity: u32) -> u64 {
    (blend_lists_offset(capacity) + capacity as u64 * size_of::<BlendList>() as u64).next_multiple_of(SECTION_ALIGNMENT)
}

/// Byte offset of the dual quaternions ([`DualQuat`], 64 bytes per joint) in a page's palette
/// buffer of `instances` instances and `joints` joints: after a palette matrix per joint
/// ([`Affine`], 48 bytes), with `sockets` [`super::MAX_SOCKETS`] socket matrices per instance,
/// with `lod_interpolation` two key palettes per joint, rounded up to 256 bytes.
#[must_use]
pub const fn dual_palettes_offset(instances: u32, joints: u32, sockets: bool, lod_interpolation: bool) -> u64 {
    let affine = size_of::<Affine>() as u64;
    let (i, j) = (instances as u64, joints as u64);
    let sockets = if sockets { i * super::MAX_SOCKETS as u64 } else { 0 };
    let keys = if lod_interpolation { 2 * j } else { 0 };
    ((j + sockets + keys) * affine).next_multiple_of(SECTION_ALIGNMENT)
}

const _: () = assert!(size_of::<DualQuat>().is_multiple_of(16) && SECTION_ALIGNMENT.is_multiple_of(16));
