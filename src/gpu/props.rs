//! [`PropRenderer`]: a rigid mesh held in a socket of chosen characters, placed on the GPU by the
//! socket matrices the palette pass writes (`shaders/prop.wgsl`).

use super::wgpu_util::{
    MeshTargets, mesh_pipeline, pipeline_layout, storage_entry, uniform_buffer, uniform_buffer_init, uniform_entry,
    wgsl_module,
};
use super::{Animator, SkinBinding};
use crate::error::{Error, Result};
use crate::gpu::blocking::blocking;
use crate::layout::Camera;
use crate::mesh::{SkinVertex, SkinnedMesh};
use wgpu::util::DeviceExt;

/// Draws a rigid mesh (a sword, a torch, a hat) at socket `socket` of each of a list of
/// characters: one instanced draw per page of the animator, the mesh placed by the socket matrix
/// the animator's palette pass wrote this frame ([`Animator::socket_slot`]). No CPU work per
/// frame beyond the draw: the prop follows the joint. With culling
/// ([`super::AnimatorDesc::culling`]), a holder the frame did not evaluate is not drawn (its
/// socket matrix is of its last evaluated frame).
pub struct PropRenderer {
    pipeline: wgpu::RenderPipeline,
    /// The rigid mesh's vertex and index buffers and its index count (of no skeleton: every
    /// vertex on the socket's matrix).
    mesh: (wgpu::Buffer, wgpu::Buffer, u32),
    camera: wgpu::Buffer,
    socket: usize,
    /// Per page of the animator: the bind group of its palette and instance buffers.
    groups: Vec<wgpu::BindGroup>,
    /// Per page: the holders' socket slots and the holders (ascending, as their slots); `None`
    /// for a page without holders.
    holders: Holders,
}

/// The instance buffer's layout: per holder, its `u32` socket slot at location 5 (after
/// [`SkinVertex::LAYOUT`]'s five) and its `u32` index in its page at location 6.
const SLOT_LAYOUT: wgpu::VertexBufferLayout<'static> = wgpu::VertexBufferLayout {
    array_stride: 8,
    step_mode: wgpu::VertexStepMode::Instance,
    attributes: &[
        wgpu::VertexAttribute {
            format: wgpu::VertexFormat::Uint32,
            offset: 0,
            shader_location: 5,
        },
        wgpu::VertexAttribute {
            format: wgpu::VertexFormat::Uint32,
            offset: 4,
            shader_location: 6,
        },
    ],
};

/// The prop's colour uniform, after the skinning bindings (1 and 2).
const COLOR_BINDING: u32 = 3;
/// The page's outputs (whose `evaluate` word says, with culling, whether the frame evaluated a
/// holder), after the skinning bindings `SkinBinding::BUILT_IN` could take.
const OUTPUTS_BINDING: u32 = 9;

/// Per page of the animator: the holders' socket slots and the holders, or `None` for a page
/// without holders.
type Holders = Vec<Option<(wgpu::Buffer, Vec<usize>)>>;

impl PropRenderer {
    blocking! {
        /// [`PropRenderer::new_async`], blocking (native only).
        ///
        /// Errors: as [`PropRenderer::new_async`].
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
        ) -> Result<Self> = Self::new_async;
    }

    /// A renderer of `mesh` (in the socket's frame; its joints and weights are not used) in
    /// `color` (linear RGB) at socket `socket` of characters `holders` of `animator`, drawing
    /// into `color_format` with an optional depth buffer and MSAA `sample_count`.
    ///
    /// It waits for the device's answer to the error scopes around its buffers, bind groups and
    /// pipeline, so it is `async`: in a browser, `.await` it; natively, [`PropRenderer::new`]
    /// blocks on it (the answer is there at once).
    ///
    /// Errors: a holder that does not exist or whose skeleton has no socket `socket` (naming
    /// the holder), a mesh that does not validate, buffers or a pipeline the device refuses.
    #[expect(clippy::too_many_arguments, reason = "a renderer's targets and what it draws")]
    pub async fn new_async(
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
        // Rigid: every vertex on the one matrix, whatever joints the mesh names.
        let rigid = SkinnedMesh {
            joints: vec![[0; 4]; mesh.positions.len()],
            weights: vec![[1.0, 0.0, 0.0, 0.0]; mesh.positions.len()],
            ..mesh.clone()
        };
        let pages = holder_pages(animator, socket, holders)?;
        let buffers = super::renderer::upload(device, &rigid, 1).await?;
        let skin = SkinBinding::BUILT_IN;
        let (pipeline, camera, groups) = super::refusable(
            device,
            || format!("the prop renderer of mesh '{}'", mesh.name),
            || -> Result<_> {
                let uniform = |binding, size| uniform_entry(binding, wgpu::ShaderStages::VERTEX_FRAGMENT, size);
                let mut entries = vec![
                    uniform(0, size_of::<Camera>() as u64),
                    uniform(COLOR_BINDING, 16),
                    storage_entry(OUTPUTS_BINDING, wgpu::ShaderStages::VERTEX, true, 0),
                ];
                entries.extend(skin.layout_entries());
                let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some("wgpu-anim props"),
                    entries: &entries,
                });
                let camera = uniform_buffer(device, "wgpu-anim prop camera", size_of::<Camera>() as u64);
                // `w`: 1 when the animator culls (a holder not evaluated is not drawn).
                let tint = [
                    color[0],
                    color[1],
                    color[2],
                    f32::from(u8::from(animator.controller().culling())),
                ];
                let tint = uniform_buffer_init(device, "wgpu-anim prop color", bytemuck::cast_slice(&tint));
                let extra = [
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: camera.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: COLOR_BINDING,
                        resource: tint.as_entire_binding(),
                    },
                ];
                let groups = (0..animator.controller().page_count())
                    .map(|page| {
                        let outputs = animator.page_outputs(page).ok_or_else(|| Error::Limit {
                            what: format!("the animator has no page {page}"),
                        })?;
                        let mut extra = extra.to_vec();
                        extra.push(wgpu::BindGroupEntry {
                            binding: OUTPUTS_BINDING,
                            resource: wgpu::BindingResource::Buffer(outputs),
                        });
                        skin.bind_group(device, &layout, animator, page, &extra)
                    })
                    .collect::<Result<Vec<_>>>()?;
                let source = crate::shaders::with_camera(&format!(
                    "{}\n{}",
                    include_str!("../../shaders/prop.wgsl"),
                    skin.wgsl()
                ));
                let module = wgsl_module(device, "wgpu-anim prop", &source);
                let pipeline_layout = pipeline_layout(device, "wgpu-anim props", &layout);
                let pipeline = mesh_pipeline(
                    device,
                    "wgpu-anim props",
                    (&module, "vs_main"),
                    &pipeline_layout,
                    &[Some(SkinVertex::LAYOUT), Some(SLOT_LAYOUT)],
                    MeshTargets::new(color_format, depth_format, sample_count),
                );
                Ok((pipeline, camera, groups))
            },
        )
        .await??;
        let holders = super::refusable(
            device,
            || "the prop holders".to_owned(),
            || holder_buffers(device, pages),
        )
        .await?;
        Ok(Self {
            pipeline,
            mesh: buffers,
            camera,
            socket,
            groups,
            holders,
        })
    }

    /// Replaces the characters holding the prop (after characters were added or removed, say).
    ///
    /// Errors (nothing changes): a holder that does not exist or whose skeleton has no socket
    /// `socket`, buffers the device refuses.
    ///
    /// Made between frames, it cannot wait for the device's answer: in a browser a buffer the
    /// device refuses reaches its uncaptured-error handler instead of being an error here.
    pub fn set_holders(&mut self, device: &wgpu::Device, animator: &Animator, holders: &[usize]) -> Result<()> {
        let pages = holder_pages(animator, self.socket, holders)?;
        self.holders = super::refusable_now(
            device,
            || "the prop holders".to_owned(),
            || holder_buffers(device, pages),
        )?;
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
        let alive = animator.controller().instance_count();
        for (group, page) in self.groups.iter().zip(&self.holders) {
            let Some((slots, holders)) = page else { continue };
            let count = holders.partition_point(|&h| h < alive) as u32;
            if count == 0 {
                continue;
            }
            pass.set_bind_group(SkinBinding::BUILT_IN.group, group, &[]);
            let (vertices, indices, index_count) = &self.mesh;
            pass.set_vertex_buffer(0, vertices.slice(..));
            pass.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint32);
            pass.set_vertex_buffer(1, slots.slice(..));
            pass.draw_indexed(0..*index_count, 0, 0..count);
        }
    }
}

/// Per page of `animator`: the socket slots of `holders` (sorted, without repeats) at socket
/// `socket`, each followed by the holder's index in the page, and those holders.
///
/// Errors: a holder that does not exist or whose skeleton has no socket `socket`.
fn holder_pages(animator: &Animator, socket: usize, holders: &[usize]) -> Result<Vec<(Vec<u32>, Vec<usize>)>> {
    let mut holders = holders.to_vec();
    holders.sort_unstable();
    holders.dedup();
    let mut pages: Vec<(Vec<u32>, Vec<usize>)> = vec![(Vec::new(), Vec::new()); animator.controller().page_count()];
    for &h in &holders {
        let (page, slot) = animator.socket_slot(h, socket).ok_or_else(|| Error::Instance {
            instance: h,
            what: format!("has no socket {socket} to hold a prop (or does not exist)"),
        })?;
        // A palette buffer fits one storage binding, whose size is a u32; so does a page.
        pages[page]
            .0
            .extend([slot as u32, (h - animator.controller().page_range(page).start) as u32]);
        pages[page].1.push(h);
    }
    Ok(pages)
}

/// The slot buffer of each page with holders ([`holder_pages`]).
fn holder_buffers(device: &wgpu::Device, pages: Vec<(Vec<u32>, Vec<usize>)>) -> Holders {
    pages
        .into_iter()
        .map(|(slots, holders)| {
            (!slots.is_empty()).then(|| {
                let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("wgpu-anim prop slots"),
                    contents: bytemuck::cast_slice(&slots),
                    usage: wgpu::BufferUsages::VERTEX,
                });
                (buffer, holders)
            })
        })
        .collect()
}
