//! What an animator holds, for a renderer or a pass of your own (its buffers, by page) and for
//! tests and tools (every stage's output read back, waiting for the GPU).

use super::animator::Animator;
use super::controller::PageState;
use super::page::Page;
use super::{AnimatorDesc, InstanceDesc, LoopMode, read_buffer};
use crate::cpu::Pose;
use crate::error::{Error, Result};
use crate::layout::{BlendList, GpuClock, GpuOutput, LocalPose, MAX_SOCKETS, outputs_offset};
use crate::library::{AnimationLibrary, ClipId};
use crate::math::Affine;
use crate::shaders::Resource;

impl Animator {
    /// The palette buffer of the first page (every instance's, when the animator has one page):
    /// 3×4 skinning matrices (`Affine`, 48 bytes), instance `i`'s joints at
    /// `instances()[i].joint_offset`. Usage: STORAGE | VERTEX | COPY_SRC | COPY_DST. With more
    /// pages, see [`Animator::page_palette_buffer`].
    #[must_use]
    pub fn palette_buffer(&self) -> &wgpu::Buffer {
        self.pages[0].buffer(Resource::Palettes)
    }

    /// The palette buffer of page `page` (its instances' `joint_offset`s index it; with sockets,
    /// [`Animator::socket_slot`] says where each socket matrix is).
    #[must_use]
    pub fn page_palette_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages.get(page).map(|p| p.buffer(Resource::Palettes))
    }

    /// Reads back page `page`'s outputs, one [`GpuOutput`] per instance in use (root motion only
    /// for instances with it on, curves when the library has any). For tests and tools; waits for
    /// the GPU.
    pub fn read_outputs_page(&self, device: &wgpu::Device, queue: &wgpu::Queue, page: usize) -> Result<Vec<GpuOutput>> {
        let (p, state) = self.page(page)?;
        let first = outputs_offset(state.max_instances) / size_of::<GpuOutput>() as u64;
        read_buffer(
            device,
            queue,
            p.buffer(Resource::CharacterState),
            first,
            state.len as u64,
        )
    }

    /// Reads back page `page`'s socket matrices: [`MAX_SOCKETS`] per instance in use, in
    /// instance order. Slots past a skeleton's sockets are not written (zero, unless an instance
    /// removed from that place used them). Empty when the library has no sockets. For tests and
    /// tools; waits for the GPU.
    pub fn read_sockets_page(&self, device: &wgpu::Device, queue: &wgpu::Queue, page: usize) -> Result<Vec<Affine>> {
        let (p, state) = self.page(page)?;
        if !self.controller.library().has_sockets() {
            return Ok(Vec::new());
        }
        read_buffer(
            device,
            queue,
            p.buffer(Resource::Palettes),
            u64::from(state.max_joints),
            state.len as u64 * u64::from(MAX_SOCKETS),
        )
    }

    /// Page `page`'s previous-frame palettes (laid out as its palettes), when they are kept
    /// ([`Animator::keep_previous_palettes`]).
    #[must_use]
    pub fn page_previous_palette_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages.get(page).and_then(|p| p.previous_palette.as_ref())
    }

    /// The instance buffer of the first page (`GpuInstance` per instance).
    #[must_use]
    pub fn instance_buffer(&self) -> &wgpu::Buffer {
        self.pages[0].buffer(Resource::Instances)
    }

    /// The instance buffer of page `page` (instance `page_range(page).start + k` at `k`).
    #[must_use]
    pub fn page_instance_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages.get(page).map(|p| p.buffer(Resource::Instances))
    }

    /// The character state buffer of the first page, written by `clock` (and `fused`): its
    /// clocks (`GpuClock` per instance) from byte 0, its outputs from
    /// [`Animator::page_outputs`]. The same buffer as [`Animator::output_buffer`].
    #[must_use]
    pub fn clock_buffer(&self) -> &wgpu::Buffer {
        self.pages[0].buffer(Resource::CharacterState)
    }

    /// The character state buffer of the first page, whose outputs (`GpuOutput` per instance:
    /// root motion, float curves) a shader of your own may read (a blend-shape weight, a
    /// foot-plant flag): bind [`Animator::page_outputs`], the outputs section alone.
    #[must_use]
    pub fn output_buffer(&self) -> &wgpu::Buffer {
        self.pages[0].buffer(Resource::CharacterState)
    }

    /// The character state buffer of page `page` (see [`Animator::page_outputs`]).
    #[must_use]
    pub fn page_output_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages.get(page).map(|p| p.buffer(Resource::CharacterState))
    }

    /// Page `page`'s outputs as a binding: `array<GpuOutput>`, instance
    /// `page_range(page).start + k` at `k`, at an offset aligned to 256 bytes (WebGPU's default
    /// `min_storage_buffer_offset_alignment`) in the page's character state buffer.
    #[must_use]
    pub fn page_outputs(&self, page: usize) -> Option<wgpu::BufferBinding<'_>> {
        let buffer = self.pages.get(page)?.buffer(Resource::CharacterState);
        let offset = outputs_offset(self.controller.page_capacity(page));
        Some(wgpu::BufferBinding {
            buffer,
            offset,
            size: std::num::NonZeroU64::new(buffer.size() - offset),
        })
    }

    /// Blend lists of the first page (`BlendList` per instance), written by `clock`, read by
    /// `sample` (the fused path keeps them in workgroup memory and does not write them).
    #[must_use]
    pub fn blend_list_buffer(&self) -> &wgpu::Buffer {
        self.pages[0].buffer(Resource::BlendLists)
    }

    /// The layer definition uniform ([`Controller::layer_defs`](super::Controller::layer_defs), room for [`MAX_LAYER_DEFS`](crate::layout::MAX_LAYER_DEFS)).
    #[must_use]
    pub fn layer_def_buffer(&self) -> &wgpu::Buffer {
        &self.layer_def_buffer
    }

    /// Joint capacity of the first page: its local pose buffer holds this many current poses,
    /// then as many snapshots.
    #[must_use]
    pub fn max_joints(&self) -> u32 {
        self.controller.page_max_joints(0)
    }

    /// Local poses of the first page (`LocalPose` per joint), written by `sample`; snapshots
    /// from `max_joints()` on (the fused path writes only snapshots).
    #[must_use]
    pub fn local_buffer(&self) -> &wgpu::Buffer {
        self.pages[0].buffer(Resource::LocalPoses)
    }

    /// Model-space matrices of the first page (`Affine` per joint), written by `local_to_model`
    /// (not by the fused path).
    #[must_use]
    pub fn model_buffer(&self) -> &wgpu::Buffer {
        self.pages[0].buffer(Resource::ModelPoses)
    }

    /// Reads back every stage's output for the first page's instances (all of them with one
    /// page; for tests and tools; waits for the GPU). On the fused path only the clocks and the
    /// palettes are this frame's.
    pub fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(Vec<GpuClock>, Pose)> {
        self.read_back_page(device, queue, 0)
    }

    /// Page `page`'s buffer of `resource`, any per-page resource of the binding table
    /// ([`Resource::scope`] is [`Scope::Page`](crate::shaders::Scope::Page)); `None` for a page
    /// that does not exist or a resource that is not per page. Laid out as
    /// [`Resource::page_bytes`] says.
    #[must_use]
    pub fn page_buffer(&self, page: usize, resource: Resource) -> Option<&wgpu::Buffer> {
        if resource.scope() != crate::shaders::Scope::Page {
            return None;
        }
        self.pages.get(page).map(|p| p.buffer(resource))
    }

    /// Reads back `count` elements of type `T` from element `first` of page `page`'s buffer of
    /// `resource` (for tests and tools; waits for the GPU).
    ///
    /// Errors: a page that does not exist, a resource that is not per page, a range past the
    /// buffer's end or not 4-byte aligned, or a failed mapping.
    pub fn read_page_buffer<T: bytemuck::Pod>(
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
                self.pages.len()
            ),
        })?;
        read_buffer(device, queue, buffer, first, count)
    }

    /// As [`Animator::read_back`], for page `page`.
    pub fn read_back_page(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: usize,
    ) -> Result<(Vec<GpuClock>, Pose)> {
        let (p, state) = self.page(page)?;
        let (n, j) = (state.len as u64, u64::from(state.joints_used));
        Ok((
            read_buffer(device, queue, p.buffer(Resource::CharacterState), 0, n)?,
            Pose {
                local: read_buffer(device, queue, p.buffer(Resource::LocalPoses), 0, j)?,
                model: read_buffer(device, queue, p.buffer(Resource::ModelPoses), 0, j)?,
                palette: read_buffer(device, queue, p.buffer(Resource::Palettes), 0, j)?,
                sockets: self.read_sockets_page(device, queue, page)?,
            },
        ))
    }

    fn page(&self, page: usize) -> Result<(&Page, &PageState)> {
        match (self.pages.get(page), self.controller.page_state(page)) {
            (Some(p), Some(state)) => Ok((p, state)),
            _ => Err(Error::Limit {
                what: format!("page {page} does not exist ({} pages)", self.pages.len()),
            }),
        }
    }

    /// Reads back the blend lists of page `page`, as the `clock` stage last wrote them.
    pub fn read_blend_lists_page(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: usize,
    ) -> Result<Vec<BlendList>> {
        let (p, state) = self.page(page)?;
        read_buffer(device, queue, p.buffer(Resource::BlendLists), 0, state.len as u64)
    }

    /// Reads back the blend lists of the first page.
    pub fn read_blend_lists(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<BlendList>> {
        self.read_blend_lists_page(device, queue, 0)
    }

    /// Reads back region `region` of page `page`'s local pose buffer: 0 the current poses, 1 the
    /// snapshots, 2 the mesh-space additive deltas (`LocalPose::rotation`; after `local_to_model`
    /// the other fields hold its scratch).
    pub fn read_local_region_page(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: usize,
        region: u32,
    ) -> Result<Vec<LocalPose>> {
        let (p, state) = self.page(page)?;
        read_buffer(
            device,
            queue,
            p.buffer(Resource::LocalPoses),
            u64::from(region.min(2)) * u64::from(state.max_joints),
            u64::from(state.joints_used),
        )
    }

    /// [`Animator::read_local_region_page`] of the first page.
    pub fn read_local_region(&self, device: &wgpu::Device, queue: &wgpu::Queue, region: u32) -> Result<Vec<LocalPose>> {
        self.read_local_region_page(device, queue, 0, region)
    }

    /// Reads back the first page's snapshot poses (`LocalPose` per joint, same offsets as the
    /// current poses).
    pub fn read_snapshots(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<LocalPose>> {
        self.read_local_region_page(device, queue, 0, 1)
    }
}

/// Evaluates clips at given times on the GPU and reads back local poses, model matrices and
/// palettes, one [`Pose`] per request (for tools and conformance tests). Times are clamped to
/// each clip.
pub fn evaluate_poses(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    library: &AnimationLibrary,
    requests: &[(ClipId, f32)],
) -> Result<Vec<Pose>> {
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let mut animator = Animator::new(
        device,
        library,
        &AnimatorDesc {
            max_instances: requests.len() as u32,
            ..AnimatorDesc::default()
        },
    )?;
    for &(clip, time) in requests {
        animator.add_instance(&InstanceDesc {
            time,
            rate: 0.0,
            loop_mode: LoopMode::Once,
            ..InstanceDesc::new(clip)
        })?;
    }
    animator.prepare(queue, 0.0);
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("evaluate_poses"),
    });
    animator.encode(&mut encoder);
    queue.submit([encoder.finish()]);
    let mut poses = Vec::with_capacity(requests.len());
    for page in 0..animator.page_count() {
        if animator.page_range(page).is_empty() {
            break;
        }
        let (_, all) = animator.read_back_page(device, queue, page)?;
        let slots = MAX_SOCKETS as usize;
        poses.extend(animator.page_instances(page).iter().enumerate().map(|(k, inst)| {
            let r = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
            Pose {
                local: all.local[r.clone()].to_vec(),
                model: all.model[r.clone()].to_vec(),
                palette: all.palette[r].to_vec(),
                sockets: all.sockets.get(k * slots..(k + 1) * slots).unwrap_or_default().to_vec(),
            }
        }));
    }
    Ok(poses)
}
