//! Previous-frame palettes, for motion vectors: when a frame copies the palettes into them, and
//! the copy ([`Animator::keep_previous_palettes`] keeps them).

use super::Animator;
use crate::math::Affine;
use crate::shaders::Resource;

/// When a frame copies each page's palettes into its previous palettes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PreviousCopy {
    /// Previous palettes are not kept.
    Off,
    /// Before the passes: the previous palettes are last frame's.
    Before,
    /// After the passes, on the first frame that keeps them: this frame's (no motion yet).
    After,
}

// Previous palettes, for motion vectors.
impl Animator {
    /// Copies the palettes in use of every page to its previous palettes (and the dual
    /// quaternions to the previous ones, when kept).
    pub(super) fn copy_previous_palettes(&self, encoder: &mut wgpu::CommandEncoder) {
        for (k, page) in self.pages.iter().enumerate().take(self.controller.pages_in_use()) {
            let joints = self.controller.page_state(k).map_or(0, |p| u64::from(p.joints_used));
            if joints == 0 {
                continue;
            }
            if let Some(previous) = &page.previous_palette {
                let bytes = joints * size_of::<Affine>() as u64;
                encoder.copy_buffer_to_buffer(page.buffer(Resource::Palettes), 0, previous, 0, bytes);
            }
            if let Some(previous) = &page.previous_dual {
                let bytes = joints * size_of::<crate::math::DualQuat>() as u64;
                let (dual_offset, _) = page.place(Resource::DualPalettes);
                encoder.copy_buffer_to_buffer(page.buffer(Resource::DualPalettes), dual_offset, previous, 0, bytes);
            }
        }
    }

    /// Whether each page's previous palettes are kept ([`Animator::keep_previous_palettes`]).
    pub(in crate::gpu) fn keeps_previous_palettes(&self) -> bool {
        self.previous_copy != PreviousCopy::Off
    }
}
