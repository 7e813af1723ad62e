//! [`GroundRenderer`]: the ground plane the built-in scenes stand on (`shaders/ground.wgsl`).

use crate::gpu::{Camera, depth_state};

/// A ground plane at y = 0 with a checkerboard that fades into the sky colour
/// ([`GroundRenderer::SKY`]) with distance, for the built-in scenes.
pub struct GroundRenderer {
    pipeline: wgpu::RenderPipeline,
    bind_group: wgpu::BindGroup,
    camera: wgpu::Buffer,
}

impl GroundRenderer {
    /// The colour the ground fades into; clear to it.
    pub const SKY: wgpu::Color = wgpu::Color {
        r: 0.55,
        g: 0.62,
        b: 0.70,
        a: 1.0,
    };

    /// A ground renderer drawing into `color_format` with optional depth.
    pub fn new(
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Self {
        let camera = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-anim ground camera"),
            size: size_of::<Camera>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("wgpu-anim ground"),
            source: wgpu::ShaderSource::Wgsl(crate::shaders::GROUND.into()),
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("wgpu-anim ground"),
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_ground"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_ground"),
                compilation_options: Default::default(),
                targets: &[Some(color_format.into())],
            }),
            primitive: Default::default(),
            depth_stencil: depth_format.map(depth_state),
            multisample: wgpu::MultisampleState {
                count: sample_count,
                ..Default::default()
            },
            multiview_mask: None,
            cache: None,
        });
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
        pass.draw(0..6, 0..1);
    }
}
