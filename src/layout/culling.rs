//! Culling's part of the layout: the frame flags and output marks of culling, update-rate LOD
//! and vertex animation textures, the head of a page's lists, and the view's frustum planes.

use glam::Vec4;

/// `GpuFrame::flags` bit: the animator culls ([`crate::gpu::AnimatorDesc::culling`]). The clock
/// stage (or the fused one) marks each character it evaluates
/// ([`GpuOutput::evaluate`](super::GpuOutput::evaluate)); the cull stage lists them
/// ([`GpuVisibleHead`]); the later stages run over that list.
pub const FRAME_CULL: u32 = 8;
/// `GpuFrame::flags` bit, with [`FRAME_CULL`]: test each character against
/// [`GpuFrame::cull_planes`](super::GpuFrame::cull_planes). Without it every character is drawn (a
/// view of `None`).
pub const FRAME_CULL_VIEW: u32 = 16;

/// `GpuFrame::flags` bit, with [`FRAME_CULL`]: a character drawn between its evaluations
/// (update-rate LOD) is drawn with an interpolation of its last two evaluated palettes, kept per
/// joint ([`crate::gpu::AnimatorDesc::lod_interpolation`]); without it, with the last one.
pub const FRAME_LOD_INTERPOLATE: u32 = 32;

/// `GpuFrame::flags` bit, with [`FRAME_CULL_VIEW`]: a character smaller on screen than
/// [`GpuFrame::vat_size`](super::GpuFrame::vat_size) that plays alone a clip its VAT holds
/// ([`GpuInstance::vat`](super::GpuInstance::vat)) is drawn with the VAT ([`MARK_VAT`]) and not
/// evaluated ([`crate::gpu::Controller::set_vat`]).
pub const FRAME_VAT: u32 = 64;

/// [`GpuOutput::evaluate`](super::GpuOutput::evaluate) bit: the frame evaluates the character
/// (samples, propagates and builds its palette).
pub const MARK_EVALUATE: u32 = 1;
/// [`GpuOutput::evaluate`](super::GpuOutput::evaluate) bit: the frame draws the character (its
/// bounds meet the view); one drawn and not evaluated holds its last evaluated palette (update-rate
/// LOD).
pub const MARK_DRAWN: u32 = 2;
/// [`GpuOutput::evaluate`](super::GpuOutput::evaluate) bit: the character is drawn this frame and
/// was not the frame before.
pub const MARK_ENTERED: u32 = 4;
/// [`GpuOutput::evaluate`](super::GpuOutput::evaluate) bit: the frame draws the character with its
/// vertex animation texture ([`FRAME_VAT`]), at the clip time the clock left in
/// [`GpuInstance::vat_time`](super::GpuInstance::vat_time): it is neither evaluated nor drawn
/// skinned ([`MARK_DRAWN`] is clear).
pub const MARK_VAT: u32 = 8;
/// [`GpuOutput::evaluate`](super::GpuOutput::evaluate) bits from this one, two of them: the update
/// rate of a character drawn skinned ([`MARK_DRAWN`]) as its base-2 logarithm (0 to 3: evaluated
/// every 1, 2, 4 or 8 frames), `(marks >> MARK_RATE_SHIFT) & 3`; 0 for any other.
pub const MARK_RATE_SHIFT: u32 = 4;
// The skinning module's `wgpu_anim_update_rate` reads both as literals.
const _: () = assert!(MARK_DRAWN == 2 && MARK_RATE_SHIFT == 4);
/// Update rates: a character is evaluated every 1, 2, 4 or 8 frames.
pub const UPDATE_RATES: [u32; 4] = [1, 2, 4, 8];

/// The head of a page's lists of the characters evaluated and drawn this frame (WGSL `Visible`,
/// whose lists of page indices, `u32` each, follow from [`VISIBLE_LIST_OFFSET`]: the evaluated
/// ones, then from `drawn_offset` the drawn ones, and from `2 × drawn_offset − 1` backwards those
/// drawn with their VAT; then from `2 × drawn_offset` the marks of every instance of the page,
/// [`GpuOutput::evaluate`](super::GpuOutput::evaluate), for a renderer's vertex stage): written
/// by the cull stage, read as indirect dispatch arguments by the later stages and as the
/// instance count of an indirect draw.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuVisibleHead {
    /// Workgroups `(x, y, 1)` of a stage with workgroups of evaluated instances (sample, ik,
    /// palette; one instance each, or eight with [`crate::gpu::CharacterThreads::One`]), split over
    /// `y` past [`CULL_MAX_WORKGROUPS`] (`x` then at most that); `w` unused.
    pub instance_groups: [u32; 4],
    /// Workgroups `(x, y, 1)` of a stage with one thread per evaluated instance (local_to_model).
    pub thread_groups: [u32; 4],
    /// Instances evaluated.
    pub count: u32,
    /// Instances drawn: a culled draw's instance count.
    pub drawn_count: u32,
    /// Where the drawn list starts in the lists, in `u32`s (the page's instance capacity).
    pub drawn_offset: u32,
    /// Instances drawn with their VAT ([`MARK_VAT`]): a VAT draw's instance count. Their list runs
    /// backwards from entry `2 × drawn_offset − 1`.
    pub vat_count: u32,
    /// Workgroups `(x, y, 1)` of workgroups of drawn instances (as `instance_groups`); `w` unused.
    pub drawn_groups: [u32; 4],
}
const _: () = assert!(std::mem::size_of::<GpuVisibleHead>() == 64);

/// Most workgroups per dimension of the dispatches the cull stage sizes: WebGPU's default
/// `max_compute_workgroups_per_dimension`, which every device allows.
pub const CULL_MAX_WORKGROUPS: u32 = 65_535;

/// Byte offset of the list in a page's visible buffer: after its [`GpuVisibleHead`].
pub const VISIBLE_LIST_OFFSET: u64 = size_of::<GpuVisibleHead>() as u64;
/// Byte offset of [`GpuVisibleHead::drawn_count`] in a page's visible buffer: where an indirect
/// draw's instance count is copied from.
pub const VISIBLE_COUNT_OFFSET: u64 = 36;
const _: () = assert!(std::mem::offset_of!(GpuVisibleHead, drawn_count) as u64 == VISIBLE_COUNT_OFFSET);
/// Byte offset of [`GpuVisibleHead::vat_count`] in a page's visible buffer: where an indirect VAT
/// draw's instance count is copied from.
pub const VISIBLE_VAT_COUNT_OFFSET: u64 = 44;
const _: () = assert!(std::mem::offset_of!(GpuVisibleHead, vat_count) as u64 == VISIBLE_VAT_COUNT_OFFSET);

/// The six planes of the frustum of `clip_from_world` (WebGPU's clip space, depth 0 to 1), each
/// normalized: `xyz` the inward unit normal, `w` the offset
/// ([`GpuFrame::cull_planes`](super::GpuFrame::cull_planes)). A plane of zero normal (a degenerate
/// matrix) is `(0, 0, 0, 1)`, which culls nothing.
#[must_use]
pub fn frustum_planes(clip_from_world: glam::Mat4) -> [Vec4; 6] {
    let m = clip_from_world;
    let (r0, r1, r2, r3) = (m.row(0), m.row(1), m.row(2), m.row(3));
    [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2].map(|p| {
        let n = p.truncate().length();
        if n > 0.0 && n.is_finite() && p.is_finite() {
            p / n
        } else {
            Vec4::W
        }
    })
}
