//! [`GroundRenderer`]: the ground plane the built-in scenes stand on (`shaders/ground.wgsl`).

use crate::gpu::Camera;
use crate::gpu::wgpu_util::{MeshPipeline, MeshTargets, uniform_buffer, wgsl_module};

/// The ground of the built-in scenes, flat at y = 0 or following a relief (the function an
/// animator's IK ground goals stand on), with a checkerboard that fades into the sky colour
/// ([`GroundRenderer::SKY`]) with distance.
pub struct GroundRenderer {
    pipeline: wgpu::RenderPipeline,
    bind_group: wgpu::BindGroup,
    camera: wgpu::Buffer,
    vertices: u32,
}

/// Cells per side of a relief's grid, whose cells grow outward: about 0.2 m wide 1 m from the
/// centre, 0.5 m at 4 m, 2 m at 25 m, 4 m at 100 m.
const RELIEF_GRID: u32 = 256;

impl GroundRenderer {
    /// The colour the ground fades into; clear to it.
    pub const SKY: wgpu::Color = wgpu::Color {
        r: 0.55,
        g: 0.62,
        b: 0.70,
        a: 1.0,
    };

    /// A ground renderer drawing into `color_format` with optional depth: flat, or at the heights
    /// of `relief` (WGSL defining `fn ground_height(p: vec2<f32>) -> f32`, as
    /// [`crate::AnimatorDesc::ground`]).
    pub fn new(
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
        relief: Option<&str>,
    ) -> Self {
        let grid = if relief.is_some() { RELIEF_GRID } else { 1 };
        let camera = uniform_buffer(device, "wgpu-anim ground camera", size_of::<Camera>() as u64);
        let module = wgsl_module(device, "wgpu-anim ground", &crate::shaders::ground_source(relief));
        let pipeline = MeshPipeline {
            constants: &[("GRID", f64::from(grid))],
            ..MeshPipeline::new("wgpu-anim ground", &module, ["vs_ground", "fs_ground"])
        }
        .build(device, MeshTargets::new(color_format, depth_format, sample_count));
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("wgpu-anim ground"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: camera.as_entire_binding(),
            }],
        });
        Self {
            pipeline,
            bind_group,
            camera,
            vertices: grid * grid * 6,
        }
    }

    /// Uploads the camera.
    pub fn set_camera(&self, queue: &wgpu::Queue, camera: &Camera) {
        queue.write_buffer(&self.camera, 0, bytemuck::bytes_of(camera));
    }

    /// Draws the ground.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.draw(0..self.vertices, 0..1);
    }
}
