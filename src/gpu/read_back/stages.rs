//! Every stage's output read back for tests and tools, waiting for the GPU (native only: a
//! browser cannot block; there [`Animator::read_page_buffer_async`] reads any page buffer).

use super::{read_at, read_buffer};
use crate::cpu::Pose;
use crate::error::{Error, Result};
use crate::gpu::animator::Animator;
use crate::gpu::controller::PageState;
use crate::gpu::page::Page;
use crate::layout::{
    BlendList, GpuClock, GpuMachineState, GpuOutput, GpuVisibleHead, LocalPose, MAX_SOCKETS, outputs_offset,
};
use crate::math::Affine;
use crate::shaders::Resource;

// Reading back, waiting (tests and tools): every stage's output.
impl Animator {
    /// Reads back page `page`'s outputs, one [`GpuOutput`] per instance in use (root motion only
    /// for instances with it on, curves when the library has any, reached IK chains when it has
    /// chains). For tests and tools; waits for
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

    /// Reads back the head of page `page`'s lists ([`Animator::read_visible_page`]) alone: the
    /// counts evaluated, drawn skinned and drawn by VAT, and the later stages' dispatch
    /// arguments; 64 bytes, whatever the page holds. For tools and titles; waits for the GPU.
    ///
    /// Errors: a page that does not exist, or an animator that does not cull.
    pub fn read_visible_head(&self, device: &wgpu::Device, queue: &wgpu::Queue, page: usize) -> Result<GpuVisibleHead> {
        let (p, _) = self.page(page)?;
        if !self.controller().culling() {
            return Err(Error::Limit {
                what: "read_visible_head: the animator does not cull (AnimatorDesc::culling)".into(),
            });
        }
        Ok(read_buffer(device, queue, p.buffer(Resource::Visible), 0, 1)?[0])
    }

    /// Reads back page `page`'s lists of the instances the last frame evaluated, drew skinned and
    /// drew with their VAT (an animator that culls, [`AnimatorDesc::culling`](crate::gpu::AnimatorDesc::culling)): their head, with
    /// the counts and the later stages' dispatch arguments, the page indices of each list and
    /// every instance's marks, in page order as [`crate::cpu::cull::cull`] gives them. For tests
    /// and tools; waits for the GPU.
    ///
    /// Errors: a page that does not exist, or an animator that does not cull.
    pub fn read_visible_page(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: usize,
    ) -> Result<(GpuVisibleHead, crate::cpu::cull::Lists)> {
        let (p, state) = self.page(page)?;
        if !self.controller().culling() {
            return Err(Error::Limit {
                what: "read_visible_page: the animator does not cull (AnimatorDesc::culling)".into(),
            });
        }
        let buffer = p.buffer(Resource::Visible);
        let head: GpuVisibleHead = read_buffer(device, queue, buffer, 0, 1)?[0];
        let words = crate::layout::VISIBLE_LIST_OFFSET / 4;
        let count = |n: u32| u64::from(n).min(state.len as u64);
        let evaluated = read_buffer(device, queue, buffer, words, count(head.count))?;
        let drawn = read_buffer(
            device,
            queue,
            buffer,
            words + u64::from(state.max_instances),
            count(head.drawn_count),
        )?;
        // The VAT list runs backwards from the drawn list's room's last entry; every instance's
        // marks follow.
        let vat_count = count(head.vat_count);
        let marks_at = words + 2 * u64::from(state.max_instances);
        let mut vat: Vec<u32> = read_buffer(device, queue, buffer, marks_at - vat_count, vat_count)?;
        vat.reverse();
        let marks = read_buffer(device, queue, buffer, marks_at, state.len as u64)?;
        Ok((
            head,
            crate::cpu::cull::Lists {
                evaluated,
                drawn,
                vat,
                marks,
            },
        ))
    }

    /// Reads back page `page`'s socket matrices: [`MAX_SOCKETS`] per instance in use, in
    /// instance order. Slots past a skeleton's sockets are not written (zero, unless an instance
    /// removed from that place used them). Empty when the library has no sockets. For tests and
    /// tools; waits for the GPU.
    pub fn read_sockets_page(&self, device: &wgpu::Device, queue: &wgpu::Queue, page: usize) -> Result<Vec<Affine>> {
        let (p, state) = self.page(page)?;
        if !self.controller().library().has_sockets() {
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

    /// Reads back every stage's output for the first page's instances (all of them with one
    /// page; for tests and tools; waits for the GPU). On the fused path only the clocks and the
    /// palettes are this frame's (with a thread per character the local poses hold its model
    /// matrices: [`Animator::local_buffer`]).
    pub fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(Vec<GpuClock>, Pose)> {
        self.read_back_page(device, queue, 0)
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
                dual: if self.controller().dual_quaternion() {
                    read_at(
                        device,
                        queue,
                        p.buffer(Resource::DualPalettes),
                        p.place(Resource::DualPalettes).0,
                        j,
                    )?
                } else {
                    Vec::new()
                },
            },
        ))
    }

    fn page(&self, page: usize) -> Result<(&Page, &PageState)> {
        match (self.pages().get(page), self.controller().page_state(page)) {
            (Some(p), Some(state)) => Ok((p, state)),
            _ => Err(Error::Limit {
                what: format!("page {page} does not exist ({} pages)", self.pages().len()),
            }),
        }
    }

    /// Reads back the blend lists of page `page`, as the `clock` stage last wrote them: each
    /// list's head, layers and first `count` samples; the samples past `count`, which the stage
    /// does not write (nor the sample stage read), as zero, as the CPU mirror writes them.
    pub fn read_blend_lists_page(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: usize,
    ) -> Result<Vec<BlendList>> {
        let (p, state) = self.page(page)?;
        let (offset, _) = p.place(Resource::BlendLists);
        let mut lists: Vec<BlendList> =
            read_at(device, queue, p.buffer(Resource::BlendLists), offset, state.len as u64)?;
        for list in &mut lists {
            let count = (list.count as usize).min(list.samples.len());
            list.samples[count..].fill(Default::default());
        }
        Ok(lists)
    }

    /// Reads back page `page`'s state machines ([`crate::machine`]), one per instance in use (as
    /// the CPU last wrote it, or the clock stage advanced it: meaningful for the instances with a
    /// machine), and their parameter slots (triggers consumed). For tests and tools; waits for
    /// the GPU.
    pub fn read_machines_page(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: usize,
    ) -> Result<(Vec<GpuMachineState>, Vec<crate::cpu::machine::Slots>)> {
        let (p, state) = self.page(page)?;
        let (states, _) = p.place(Resource::MachineStates);
        let (params, _) = p.place(Resource::MachineParameters);
        let buffer = p.buffer(Resource::CharacterState);
        Ok((
            read_at(device, queue, buffer, states, state.len as u64)?,
            read_at(device, queue, buffer, params, state.len as u64)?,
        ))
    }

    /// Reads back the blend lists of the first page.
    pub fn read_blend_lists(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<BlendList>> {
        self.read_blend_lists_page(device, queue, 0)
    }

    /// Reads back region `region` of page `page`'s poses: 0 the current poses, 1 the snapshots
    /// (under an inertialized transition, its offsets), 2 (with
    /// [`AnimatorDesc::layers`](crate::gpu::AnimatorDesc::layers)) the mesh-space additive deltas
    /// (`LocalPose::rotation`; after `local_to_model` the other fields hold its scratch), 3 (with
    /// [`AnimatorDesc::inertialization`](crate::gpu::AnimatorDesc::inertialization)) the velocities an
    /// inertialized transition keeps. Regions 0 and 2 are the sections of the page's local pose
    /// buffer ([`Resource::LocalPoses`]), 1 and 3 those of its pose history
    /// ([`Resource::PoseHistory`]).
    ///
    /// Errors: a page that does not exist, a region the page does not keep, or the device fails.
    pub fn read_local_region_page(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: usize,
        region: u32,
    ) -> Result<Vec<LocalPose>> {
        let (p, state) = self.page(page)?;
        let (resource, section) = match region {
            0 => (Resource::LocalPoses, 0),
            1 => (Resource::PoseHistory, 0),
            2 if self.controller().layers() => (Resource::LocalPoses, 1),
            3 if self.controller().inertialization() => (Resource::PoseHistory, 1),
            _ => {
                return Err(Error::Limit {
                    what: format!(
                        "page {page}'s poses have no region {region} (0 current, 1 snapshots, 2 mesh-space deltas with layers, 3 velocities with inertialization)"
                    ),
                });
            }
        };
        read_buffer(
            device,
            queue,
            p.buffer(resource),
            section * u64::from(state.max_joints),
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
