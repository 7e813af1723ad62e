//! The layout of a page's character state before its sections: the outputs after the clocks.
//! The sections of a page buffer (the blend lists and morph weights after the outputs, the dual
//! quaternions after the palettes) each start on a 256-byte boundary, WebGPU's default storage
//! offset alignment, so that a renderer or a pass of your own can bind one section alone:
//! [`crate::shaders::Resource::place`] gives where each lies, and the frame uniform carries
//! their bases to the shaders ([`super::GpuFrame::sections`]).

use super::{BlendList, GpuClock};
use crate::math::DualQuat;

/// 16-byte units of a [`BlendList`] in the character state (WGSL `BLEND_LIST_UNITS`): its head
/// (count, mesh-space additive flag, inertia bits and time), a unit per layer, a unit per sample.
pub const BLEND_LIST_UNITS: u32 = 1 + super::MAX_LAYERS + super::MAX_BLEND_CLIPS;
const _: () = assert!(BLEND_LIST_UNITS as usize * 16 == size_of::<BlendList>());

/// WebGPU's default `min_storage_buffer_offset_alignment`: every section starts at a multiple.
pub const SECTION_ALIGNMENT: u64 = 256;

/// Byte offset of the outputs ([`GpuOutput`](super::GpuOutput)) in a page's character state buffer of `capacity`
/// instances: after their clocks ([`GpuClock`], 64 bytes each), rounded up to 256 bytes.
#[must_use]
pub const fn outputs_offset(capacity: u32) -> u64 {
    (capacity as u64 * size_of::<GpuClock>() as u64).next_multiple_of(SECTION_ALIGNMENT)
}

const _: () = assert!(size_of::<DualQuat>().is_multiple_of(16) && SECTION_ALIGNMENT.is_multiple_of(16));
