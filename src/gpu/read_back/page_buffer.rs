//! Any page buffer read back by its resource, for tests and tools: the one read that works in a
//! browser too (`.await` it there).

use crate::error::{Error, Result};
use crate::gpu::animator::Animator;
use crate::gpu::blocking::blocking;
use crate::shaders::Resource;

// Reading back on request (tests and tools; awaited in a browser): any page buffer.
impl Animator {
    blocking! {
        /// Reads back `count` elements of type `T` from element `first` of page `page`'s buffer of
        /// `resource` (for tests and tools): [`Animator::read_page_buffer_async`], blocking (native
        /// only).
        ///
        /// Errors: as [`Animator::read_page_buffer_async`].
        pub fn read_page_buffer<T: bytemuck::Pod>(
            &self,
            device: &wgpu::Device,
            queue: &wgpu::Queue,
            page: usize,
            resource: Resource,
            first: u64,
            count: u64,
        ) -> Result<Vec<T>> = Self::read_page_buffer_async;
    }

    /// Reads back `count` elements of type `T` from element `first` of page `page`'s buffer of
    /// `resource` once the GPU has written them (in a browser, `.await` it).
    ///
    /// Errors: a page that does not exist, a resource that is not per page, a range past the
    /// buffer's end or not 4-byte aligned, or a failed mapping.
    pub async fn read_page_buffer_async<T: bytemuck::Pod>(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: usize,
        resource: Resource,
        first: u64,
        count: u64,
    ) -> Result<Vec<T>> {
        let buffer = self.page_buffer(page, resource).ok_or_else(|| Error::Limit {
            what: format!(
                "page {page} has no buffer of {} ({} pages; per-page resources only)",
                resource.name(),
                self.pages().len()
            ),
        })?;
        // A section's elements count from where it starts in its home's buffer.
        let (start, _) = self.pages()[page].place(resource);
        let offset = first
            .checked_mul(size_of::<T>() as u64)
            .and_then(|b| b.checked_add(start));
        let offset = offset.ok_or_else(|| Error::Limit {
            what: format!("a read of {count} elements from element {first} overflows a byte count"),
        })?;
        super::read_at_async(device, queue, buffer, offset, count).await
    }
}
