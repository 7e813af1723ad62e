//! [`CulledDraws`]: a mesh's indirect draws for an animator that culls, one per page, each
//! drawing the instances the frame evaluated.

use super::Animator;
use crate::error::{Error, Result};

/// The indirect draw arguments of one mesh for an animator that culls
/// ([`super::AnimatorDesc::culling`]): per page, `mesh`'s index count and the number of instances
/// the frame evaluated, which [`CulledDraws::encode`] copies from the page's list on the GPU.
/// The CPU records the same commands whatever is seen.
pub struct CulledDraws {
    buffer: wgpu::Buffer,
    pub(super) pages: usize,
    /// The index count of the mesh the draws were made for.
    pub(super) index_count: u32,
    /// Where in a page's visible buffer the instance count is copied from.
    count_offset: u64,
}

/// Bytes of one `draw_indexed_indirect` argument set.
const DRAW_ARGS: u64 = 20;

impl CulledDraws {
    /// The draws of `mesh` for every page of `animator`.
    ///
    /// Errors ([`Error::Binding`]): an animator that does not cull.
    pub fn new(device: &wgpu::Device, animator: &Animator, mesh: &super::MeshBuffers) -> Result<Self> {
        use wgpu::util::DeviceExt;
        if !animator.controller().culling() {
            return Err(Error::Binding {
                what: "culled draws".into(),
                reason: "the animator does not cull (AnimatorDesc::culling)".into(),
            });
        }
        let pages = animator.controller().page_count();
        // index count, instance count (copied each frame), first index, base vertex, first instance.
        let args: Vec<u32> = (0..pages).flat_map(|_| [mesh.index_count, 0, 0, 0, 0]).collect();
        let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("wgpu-anim culled draws"),
            contents: bytemuck::cast_slice(&args),
            usage: wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_DST,
        });
        Ok(Self {
            buffer,
            pages,
            index_count: mesh.index_count,
            count_offset: crate::layout::VISIBLE_COUNT_OFFSET,
        })
    }

    /// The draws of `mesh` played by its VAT for every page of `animator`: each page's count of
    /// instances the frame draws with their VAT ([`crate::layout::MARK_VAT`]), for a shader that
    /// draws `wgpu_anim_vat_instance(instance_index)`.
    ///
    /// Errors ([`Error::Binding`]): an animator that does not cull.
    pub fn for_vat(device: &wgpu::Device, animator: &Animator, mesh: &super::MeshBuffers) -> Result<Self> {
        Ok(Self {
            count_offset: crate::layout::VISIBLE_VAT_COUNT_OFFSET,
            ..Self::new(device, animator, mesh)?
        })
    }

    /// Records the copy of each page's count of evaluated instances into its draw: after
    /// [`Animator::encode`] (whose cull pass counts them), before the render pass that draws.
    /// Four bytes per page, whatever is seen; a page not in use draws nothing.
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder, animator: &Animator) {
        let in_use = animator.controller().pages_in_use();
        for page in 0..self.pages.min(animator.controller().page_count()) {
            let to = page as u64 * DRAW_ARGS + 4;
            match animator.page_visible_buffer(page) {
                Some(list) if page < in_use => {
                    encoder.copy_buffer_to_buffer(list, self.count_offset, &self.buffer, to, 4);
                }
                // A page not in use has no list this frame: nothing to draw.
                _ => encoder.clear_buffer(&self.buffer, to, Some(4)),
            }
        }
    }

    /// One indirect instanced draw of `mesh` per page of `bind_groups` (set at `group`).
    pub(crate) fn draw<'g>(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        group: u32,
        bind_groups: impl IntoIterator<Item = &'g wgpu::BindGroup>,
        mesh: &super::MeshBuffers,
    ) {
        mesh.bind(pass, 0);
        for (page, bind_group) in bind_groups.into_iter().enumerate().take(self.pages) {
            pass.set_bind_group(group, bind_group, &[]);
            pass.draw_indexed_indirect(&self.buffer, page as u64 * DRAW_ARGS);
        }
    }
}
