//! [`PropRenderer`]: a rigid mesh held in a socket of chosen characters, placed on the GPU by the
//! socket matrices the palette pass writes (`shaders/prop.wgsl`).

use super::Animator;
use super::renderer::{Camera, MeshBuffers, MeshTargets, mesh_pipeline};
use crate::error::{Error, Result};
use crate::mesh::{SkinVertex, SkinnedMesh};
use wgpu::util::DeviceExt;

/// Draws a rigid mesh (a sword, a torch, a hat) at socket `socket` of each of a list of
/// characters: one instanced draw per page of the animator, the mesh placed by the socket matrix
/// the animator's palette pass wrote this frame ([`Animator::socket_slot`]). No CPU work per
/// frame beyond the draw: the prop follows the joint.
pub struct PropRenderer {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    camera: wgpu::Buffer,
    color: wgpu::Buffer,
    mesh: MeshBuffers,
    socket: usize,
    /// Per page: the bind group of its palette buffer, the holders' socket slots, and the holders
    /// (ascending, as their slots).
    pages: Vec<(wgpu::BindGroup, wgpu::Buffer, Vec<usize>)>,
}

/// The instance buffer's layout: one `u32` socket slot per holder, at location 5 (after
/// [`SkinVertex::LAYOUT`]'s five).
const SLOT_LAYOUT: wgpu::VertexBufferLayout<'static> = wgpu::VertexBufferLayout {
    array_stride: 4,
    step_mode: wgpu::VertexStepMode::Instance,
    attributes: &[wgpu::VertexAttribute {
        format: wgpu::VertexFormat::Uint32,
        offset: 0,
        shader_location: 5,
    }],
};

impl PropRenderer {
    /// A renderer of `mesh` (in the socket's frame; its joints and weights are not used) in
    /// `color` (linear RGB) at socket `socket` of characters `holders` of `animator`, drawing
    /// into `color_format` with an optional depth buffer and MSAA `sample_count`.
    ///
    /// Errors: a holder that does not exist or whose skeleton has no socket `socket` (naming
    /// the holder), a mesh that does not validate, buffers or a pipeline the device refuses.
    #[expect(clippy::too_many_arguments, reason = "a renderer's targets and what it draws")]
    pub fn new(
        device: &wgpu::Device,
        animator: &Animator,
        mesh: &SkinnedMesh,
        socket: usize,
        holders: &[usize],
        color: [f32; 3],
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Result<Self> {
        let buffers = MeshBuffers::new(device, mesh, 1)?;
        let (pipeline, layout, camera, color) = super::refusable(
            device,
            || format!("the prop renderer of mesh '{}'", mesh.name),
            || {
                let uniform = |binding: u32, size: u64| wgpu::BindGroupLayoutEntry {
                    binding,
                    visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: wgpu::BufferSize::new(size),
                    },
                    count: None,
                };
                let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some("wgpu-anim props"),
                    entries: &[
                        uniform(0, size_of::<Camera>() as u64),
                        wgpu::BindGroupLayoutEntry {
                            binding: 1,
                            visibility: wgpu::ShaderStages::VERTEX,
                            ty: wgpu::BindingType::Buffer {
                                ty: wgpu::BufferBindingType::Storage { read_only: true },
                                has_dynamic_offset: false,
                                min_binding_size: None,
                            },
                            count: None,
                        },
                        uniform(2, 16),
                    ],
                });
                let camera = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("wgpu-anim prop camera"),
                    size: size_of::<Camera>() as u64,
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let tint = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("wgpu-anim prop color"),
                    contents: bytemuck::cast_slice(&[color[0], color[1], color[2], 1.0]),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some("wgpu-anim prop"),
                    source: wgpu::ShaderSource::Wgsl(include_str!("../../shaders/prop.wgsl").into()),
                });
                let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label: Some("wgpu-anim props"),
                    bind_group_layouts: &[Some(&layout)],
                    immediate_size: 0,
                });
                let pipeline = mesh_pipeline(
                    device,
                    "wgpu-anim props",
                    &module,
                    &pipeline_layout,
                    &[Some(SkinVertex::LAYOUT), Some(SLOT_LAYOUT)],
                    MeshTargets {
                        color_format,
                        depth_format,
                        sample_count,
                    },
                );
                (pipeline, layout, camera, tint)
            },
        )?;
        let mut renderer = Self {
            pipeline,
            layout,
            camera,
            color,
            mesh: buffers,
            socket,
            pages: Vec::new(),
        };
        renderer.set_holders(device, animator, holders)?;
        Ok(renderer)
    }

    /// Replaces the characters holding the prop (after characters were added or removed, say).
    ///
    /// Errors (nothing changes): a holder that does not exist or whose skeleton has no socket
    /// `socket`, buffers the device refuses.
    pub fn set_holders(&mut self, device: &wgpu::Device, animator: &Animator, holders: &[usize]) -> Result<()> {
        let mut holders = holders.to_vec();
        holders.sort_unstable();
        holders.dedup();
        let mut slots: Vec<Vec<u32>> = vec![Vec::new(); animator.page_count()];
        let mut page_holders: Vec<Vec<usize>> = vec![Vec::new(); animator.page_count()];
        for &h in &holders {
            let (page, slot) = animator.socket_slot(h, self.socket).ok_or_else(|| Error::Instance {
                instance: h,
                what: format!("has no socket {} to hold a prop (or does not exist)", self.socket),
            })?;
            // A palette buffer fits one storage binding, whose size is a u32.
            slots[page].push(slot as u32);
            page_holders[page].push(h);
        }
        let pages = super::refusable(
            device,
            || "the prop holders".to_owned(),
            || {
                slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| !s.is_empty())
                    .filter_map(|(page, s)| {
                        let palettes = animator.page_palette_buffer(page)?;
                        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                            label: Some("wgpu-anim props"),
                            layout: &self.layout,
                            entries: &[
                                wgpu::BindGroupEntry {
                                    binding: 0,
                                    resource: self.camera.as_entire_binding(),
                                },
                                wgpu::BindGroupEntry {
                                    binding: 1,
                                    resource: palettes.as_entire_binding(),
                                },
                                wgpu::BindGroupEntry {
                                    binding: 2,
                                    resource: self.color.as_entire_binding(),
                                },
                            ],
                        });
                        let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                            label: Some("wgpu-anim prop slots"),
                            contents: bytemuck::cast_slice(s),
                            usage: wgpu::BufferUsages::VERTEX,
                        });
                        Some((group, buffer, page_holders[page].clone()))
                    })
                    .collect()
            },
        )?;
        self.pages = pages;
        Ok(())
    }

    /// Uploads the camera.
    pub fn set_camera(&self, queue: &wgpu::Queue, camera: &Camera) {
        queue.write_buffer(&self.camera, 0, bytemuck::bytes_of(camera));
    }

    /// Draws the prop of every holder still among `animator`'s instances (those removed since
    /// the holders were set are skipped): one instanced draw per page that has holders. Record
    /// it after the animator's passes of the frame.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>, animator: &Animator) {
        pass.set_pipeline(&self.pipeline);
        let alive = animator.instance_count();
        for (group, slots, holders) in &self.pages {
            let count = holders.partition_point(|&h| h < alive) as u32;
            if count == 0 {
                continue;
            }
            pass.set_bind_group(0, group, &[]);
            self.mesh.bind(pass, 0);
            pass.set_vertex_buffer(1, slots.slice(..));
            pass.draw_indexed(0..self.mesh.index_count, 0, 0..count);
        }
    }
}
