//! Previous-frame palettes, for motion vectors: whether an animator keeps them, and the copy
//! each frame records into them.

use super::Animator;
use crate::error::Result;
use crate::gpu::page::Page;
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
    /// Keeps (or stops keeping) each page's previous-frame palettes, for motion vectors: a
    /// buffer per page beside the palettes ([`Animator::page_previous_palette_buffer`]) that every
    /// frame's [`Animator::encode`] fills with the palettes before its passes overwrite them (a
    /// copy of the joints in use). On the first frame after this call it holds that frame's own
    /// palettes (no motion); an instance added since the last frame has no previous pose, and
    /// its previous palettes are whatever its joints held. With dual quaternions kept
    /// ([`crate::gpu::AnimatorDesc::dual_quaternion`]), last frame's dual quaternions are kept the same
    /// way ([`Animator::page_previous_dual_palette_buffer`]); an instance that skins with them
    /// since this frame only has whatever its joints' previous dual quaternions held. Off by
    /// default: no buffer, no copy.
    ///
    /// Errors: buffers the device refuses ([`Error::Refused`](crate::Error::Refused)); then nothing changes.
    pub fn keep_previous_palettes(&mut self, device: &wgpu::Device, keep: bool) -> Result<()> {
        if !keep {
            for page in &mut self.pages {
                page.previous_palette = None;
                page.previous_dual = None;
            }
            self.previous_copy = PreviousCopy::Off;
            return Ok(());
        }
        if self.previous_copy != PreviousCopy::Off {
            return Ok(());
        }
        let dual = self.controller.dual_quaternion();
        let buffers = crate::gpu::refusable_now(
            device,
            || "the previous palettes".to_owned(),
            || {
                let copy = |k: usize, page: &Page, resource: Resource| {
                    device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(&format!("wgpu-anim page {k} previous {}", resource.name())),
                        // A section's bytes (the dual quaternions'), or the whole buffer.
                        size: page.place(resource).1.max(size_of::<crate::math::DualQuat>() as u64),
                        usage: page.buffer(resource).usage(),
                        mapped_at_creation: false,
                    })
                };
                self.pages
                    .iter()
                    .enumerate()
                    .map(|(k, page)| {
                        let previous_dual = dual.then(|| copy(k, page, Resource::DualPalettes));
                        (copy(k, page, Resource::Palettes), previous_dual)
                    })
                    .collect::<Vec<_>>()
            },
        )?;
        for (page, (palette, dual)) in self.pages.iter_mut().zip(buffers) {
            page.previous_palette = Some(palette);
            page.previous_dual = dual;
        }
        self.previous_copy = PreviousCopy::After;
        self.previous_prepared = false;
        Ok(())
    }

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
