//! [`GpuVat`]: a mesh's vertex animation texture ([`Vat`]) in a storage buffer, for the skinning
//! module's `wgpu_anim_vat` (with [`super::SkinBinding::vat`]).

use crate::error::{Error, Result};
use crate::gpu::blocking::blocking;
use crate::library::AnimationLibrary;
use crate::vat::Vat;
use wgpu::util::DeviceExt;

/// A mesh's VAT on the GPU: [`Vat::gpu_words`] for its library in one read-only storage buffer,
/// bound by [`super::SkinBinding::mesh_bind_group`]. The built-in renderer makes its own
/// ([`super::SkinnedRenderer::set_vat`]).
#[derive(Debug)]
pub struct GpuVat {
    buffer: wgpu::Buffer,
    mesh: String,
    vertices: u32,
}

impl GpuVat {
    blocking! {
        /// [`GpuVat::new_async`], blocking (native only).
        ///
        /// Errors: as [`GpuVat::new_async`].
        pub fn new(device: &wgpu::Device, library: &AnimationLibrary, vat: &Vat) -> Result<Self> = Self::new_async;
    }

    /// Uploads `vat`, baked from `library` ([`crate::offline::vat::bake_vat`]).
    ///
    /// Errors: a VAT whose clips are not `library`'s (by index and name) or whose skeleton it
    /// does not have; one larger than the device's `max_storage_buffer_binding_size` (each
    /// [`Error::Limit`], naming the mesh); a buffer the device refuses ([`Error::Refused`]).
    pub async fn new_async(device: &wgpu::Device, library: &AnimationLibrary, vat: &Vat) -> Result<Self> {
        // Fields that disagree (the struct's are public) would send the vertex stage's reads past
        // the buffer: refused here.
        vat.check()
            .and_then(|()| super::controller::check_vat(vat, library, vat.skeleton))
            .map_err(|what| Error::Limit {
                what: format!("the VAT of mesh '{}': {what}", vat.mesh),
            })?;
        let clips = library.clips().len() as u32;
        let (bytes, max) = (vat.gpu_bytes(clips), device.limits().max_storage_buffer_binding_size);
        if bytes > max {
            return Err(Error::Limit {
                what: format!(
                    "the VAT of mesh '{}' takes {bytes} bytes, past the device's storage binding size ({max}): \
                     bake fewer clips or frames",
                    vat.mesh
                ),
            });
        }
        let buffer = super::refusable(
            device,
            || format!("the VAT of mesh '{}'", vat.mesh),
            || {
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("wgpu-anim VAT"),
                    contents: bytemuck::cast_slice(&vat.gpu_words(clips)),
                    usage: wgpu::BufferUsages::STORAGE,
                })
            },
        )
        .await?;
        Ok(Self {
            buffer,
            mesh: vat.mesh.clone(),
            vertices: vat.vertex_count,
        })
    }

    /// The buffer (`array<u32>`, [`Vat::gpu_words`]).
    #[must_use]
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// The mesh's name.
    #[must_use]
    pub fn mesh(&self) -> &str {
        &self.mesh
    }

    /// Vertices of the mesh.
    #[must_use]
    pub fn vertex_count(&self) -> u32 {
        self.vertices
    }
}
