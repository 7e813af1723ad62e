//! What to draw into: an offscreen colour + depth target whose picture is read back (headless
//! tests of a renderer, the demos' pictures, the browser check), a window's depth buffer in the
//! built-in pipelines' format, and a render pass that clears both. Not demo-only: the
//! own-pipeline example, which builds without the `scene` feature as a user's renderer would,
//! draws through them.

use crate::error::{Error, Result};
use crate::gpu::blocking::blocking;

/// Begins the render pass of a scene: clears `color` to `clear` and `depth` to 1, and stores both.
/// For a surface texture's view as much as for an [`OffscreenTarget`].
pub fn scene_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    color: &wgpu::TextureView,
    depth: &wgpu::TextureView,
    clear: wgpu::Color,
) -> wgpu::RenderPass<'e> {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("wgpu-anim scene"),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: color,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Clear(clear),
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
            view: depth,
            depth_ops: Some(wgpu::Operations {
                load: wgpu::LoadOp::Clear(1.0),
                store: wgpu::StoreOp::Store,
            }),
            stencil_ops: None,
        }),
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}

/// An offscreen colour + depth target whose picture can be read back, for headless rendering.
pub struct OffscreenTarget {
    /// Colour texture (`Rgba8UnormSrgb`).
    pub color: wgpu::Texture,
    /// Depth texture (`Depth32Float`).
    pub depth: wgpu::Texture,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl OffscreenTarget {
    /// Colour format of the target.
    pub const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;
    /// Depth format of the target.
    pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

    /// A target of `width` × `height` pixels.
    pub fn new(device: &wgpu::Device, width: u32, height: u32) -> Result<Self> {
        let max = device.limits().max_texture_dimension_2d;
        if width == 0 || height == 0 || width > max || height > max {
            return Err(Error::Limit {
                what: format!("image size {width}x{height} must be between 1 and {max} pixels per side"),
            });
        }
        let texture = |format, usage, label| attachment(device, width, height, format, usage, label);
        Ok(Self {
            color: texture(
                Self::COLOR_FORMAT,
                wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
                "wgpu-anim offscreen colour",
            ),
            depth: texture(
                Self::DEPTH_FORMAT,
                wgpu::TextureUsages::RENDER_ATTACHMENT,
                "wgpu-anim offscreen depth",
            ),
            width,
            height,
        })
    }

    /// Begins a render pass that clears to `clear` and depth 1.
    pub fn begin_pass<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        clear: wgpu::Color,
    ) -> (wgpu::RenderPass<'e>, [wgpu::TextureView; 2]) {
        let views = [
            self.color.create_view(&Default::default()),
            self.depth.create_view(&Default::default()),
        ];
        let pass = scene_pass(encoder, &views[0], &views[1], clear);
        (pass, views)
    }

    blocking! {
        /// Reads the picture back as tightly packed RGBA8 rows, top row first: [`OffscreenTarget::read_rgba_async`],
        /// blocking (native only).
        ///
        /// Errors: as [`OffscreenTarget::read_rgba_async`].
        pub fn read_rgba(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<u8>> = Self::read_rgba_async;
    }

    /// Reads the picture back as tightly packed RGBA8 rows, top row first, once the GPU has
    /// drawn it (in a browser, `.await` it).
    ///
    /// Errors: a failed mapping ([`Error::Device`]).
    pub async fn read_rgba_async(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<u8>> {
        let row = self.width * 4;
        let padded = row.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-anim picture"),
            size: u64::from(padded) * u64::from(self.height),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.copy_texture_to_buffer(
            self.color.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded),
                    rows_per_image: None,
                },
            },
            self.color.size(),
        );
        queue.submit([encoder.finish()]);
        let data: Vec<u8> = crate::gpu::read_buffer_async(device, queue, &buffer, 0, buffer.size()).await?;
        Ok(data
            .chunks_exact(padded as usize)
            .flat_map(|r| r[..row as usize].iter().copied())
            .collect())
    }
}

/// A depth buffer of [`OffscreenTarget::DEPTH_FORMAT`] (the built-in pipelines' format) for a
/// window of `width` × `height` pixels, each side clamped to between 1 and the device's
/// `max_texture_dimension_2d` (a minimized window reports a size of 0; a texture may not have one).
#[must_use]
pub fn depth_view(device: &wgpu::Device, width: u32, height: u32) -> wgpu::TextureView {
    let usage = wgpu::TextureUsages::RENDER_ATTACHMENT;
    let max = device.limits().max_texture_dimension_2d;
    attachment(
        device,
        width.clamp(1, max),
        height.clamp(1, max),
        OffscreenTarget::DEPTH_FORMAT,
        usage,
        "wgpu-anim depth",
    )
    .create_view(&Default::default())
}

/// A single-sampled 2D texture of `width` × `height` pixels for a render pass.
fn attachment(
    device: &wgpu::Device,
    width: u32,
    height: u32,
    format: wgpu::TextureFormat,
    usage: wgpu::TextureUsages,
    label: &str,
) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats: &[],
    })
}
