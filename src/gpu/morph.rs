//! [`GpuMorphTargets`]: a mesh's morph targets ([`MorphSet`]) in a storage buffer, for the
//! skinning module's `wgpu_anim_morph`.

use crate::error::{Error, Result};
use crate::gpu::blocking::blocking;
use crate::morph::MorphSet;
use wgpu::util::DeviceExt;

/// A mesh's morph targets on the GPU: [`MorphSet::words`] in one read-only storage buffer, bound
/// with the page's morph weights by [`super::SkinBinding::morph_bind_group`].
#[derive(Debug)]
pub struct GpuMorphTargets {
    buffer: wgpu::Buffer,
    mesh: String,
    targets: usize,
    vertices: usize,
}

impl GpuMorphTargets {
    blocking! {
        /// [`GpuMorphTargets::new_async`], blocking (native only).
        ///
        /// Errors: as [`GpuMorphTargets::new_async`].
        pub fn new(device: &wgpu::Device, set: &MorphSet) -> Result<Self> = Self::new_async;
    }

    /// Uploads `set`.
    ///
    /// Errors: a set larger than the device's `max_storage_buffer_binding_size`
    /// ([`Error::Limit`], naming the mesh); a buffer the device refuses ([`Error::Refused`]).
    pub async fn new_async(device: &wgpu::Device, set: &MorphSet) -> Result<Self> {
        let max = device.limits().max_storage_buffer_binding_size;
        if set.bytes() > max {
            return Err(Error::Limit {
                what: format!(
                    "the morph targets of mesh '{}' take {} bytes, past the device's storage binding size ({max})",
                    set.mesh(),
                    set.bytes()
                ),
            });
        }
        let buffer = super::refusable(
            device,
            || format!("the morph targets of mesh '{}'", set.mesh()),
            || {
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("wgpu-anim morph targets"),
                    contents: bytemuck::cast_slice(set.words()),
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                })
            },
        )
        .await?;
        Ok(Self {
            buffer,
            mesh: set.mesh().to_owned(),
            targets: set.target_count(),
            vertices: set.vertex_count(),
        })
    }

    /// The buffer (`array<vec4<u32>>`, [`MorphSet::words`]).
    #[must_use]
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// The mesh's name.
    #[must_use]
    pub fn mesh(&self) -> &str {
        &self.mesh
    }

    /// Number of targets.
    #[must_use]
    pub fn target_count(&self) -> usize {
        self.targets
    }

    /// Number of vertices of the mesh.
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.vertices
    }
}
