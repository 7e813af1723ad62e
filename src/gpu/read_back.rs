//! Every stage's output read back for tests and tools, waiting for the GPU (native only: a
//! browser cannot block; there [`Animator::read_page_buffer_async`] reads any page buffer).

use super::animator::Animator;
use super::controller::PageState;
use super::page::Page;
use super::renderer::built_in_skin_source;
use super::{AnimatorDesc, InstanceDesc, LoopMode, read_at, read_buffer, split_dispatch};
use crate::cpu::{Pose, SkinnedPoint};
use crate::error::{Error, Result};
use crate::layout::WORKGROUP_SIZE;
use crate::layout::{BlendList, GpuClock, GpuOutput, GpuVisibleHead, LocalPose, MAX_SOCKETS, outputs_offset};
use crate::library::{AnimationLibrary, ClipId};
use crate::math::Affine;
use crate::mesh::SkinVertex;
use crate::shaders::Resource;
use wgpu::util::DeviceExt;

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
        if !self.controller.culling() {
            return Err(Error::Limit {
                what: "read_visible_head: the animator does not cull (AnimatorDesc::culling)".into(),
            });
        }
        Ok(read_buffer(device, queue, p.buffer(Resource::Visible), 0, 1)?[0])
    }

    /// Reads back page `page`'s lists of the instances the last frame evaluated, drew skinned and
    /// drew with their VAT (an animator that culls, [`AnimatorDesc::culling`]): their head, with
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
        if !self.controller.culling() {
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
                dual: if self.controller.dual_quaternion() {
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
        match (self.pages.get(page), self.controller.page_state(page)) {
            (Some(p), Some(state)) => Ok((p, state)),
            _ => Err(Error::Limit {
                what: format!("page {page} does not exist ({} pages)", self.pages.len()),
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

    /// Reads back the blend lists of the first page.
    pub fn read_blend_lists(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<BlendList>> {
        self.read_blend_lists_page(device, queue, 0)
    }

    /// Reads back region `region` of page `page`'s poses: 0 the current poses, 1 the snapshots
    /// (under an inertialized transition, its offsets), 2 (with
    /// [`AnimatorDesc::layers`](super::AnimatorDesc::layers)) the mesh-space additive deltas
    /// (`LocalPose::rotation`; after `local_to_model` the other fields hold its scratch), 3 (with
    /// [`AnimatorDesc::inertialization`](super::AnimatorDesc::inertialization)) the velocities an
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
            2 if self.controller.layers() => (Resource::LocalPoses, 1),
            3 if self.controller.inertialization() => (Resource::PoseHistory, 1),
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
        animator.controller_mut().add_instance(&InstanceDesc {
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
    animator.encode(&mut encoder)?;
    queue.submit([encoder.finish()]);
    let mut poses = Vec::with_capacity(requests.len());
    for page in 0..animator.controller().page_count() {
        if animator.controller().page_range(page).is_empty() {
            break;
        }
        let (_, all) = animator.read_back_page(device, queue, page)?;
        let slots = MAX_SOCKETS as usize;
        poses.extend(
            animator
                .controller()
                .page_instances(page)
                .iter()
                .enumerate()
                .map(|(k, inst)| {
                    let r = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
                    Pose {
                        local: all.local[r.clone()].to_vec(),
                        model: all.model[r.clone()].to_vec(),
                        palette: all.palette[r.clone()].to_vec(),
                        sockets: all.sockets.get(k * slots..(k + 1) * slots).unwrap_or_default().to_vec(),
                        dual: all.dual.get(r).unwrap_or_default().to_vec(),
                    }
                }),
        );
    }
    Ok(poses)
}

/// Skins `vertices` with the palette of the animator instance at `joint_offset` (in the first
/// page's palette buffer) in a compute pass (the `skin` entry of `shaders/skin.wgsl`, the
/// skinning module's linear blend skinning, as the renderer skins) and reads the model-space
/// results back.
///
/// Errors: buffers or a pipeline the device refuses ([`crate::Error::Refused`]), a failed
/// read-back.
pub fn skin_on_gpu(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    animator: &Animator,
    joint_offset: u32,
    vertices: &[SkinVertex],
) -> Result<Vec<SkinnedPoint>> {
    skin_on_gpu_blended(device, queue, animator, joint_offset, 0.0, vertices)
}

/// As [`skin_on_gpu`], skinned `dual_amount` by dual quaternions (the skinning module's
/// `wgpu_anim_skin_blended_at`: 0 linear blend skinning, 1 dual quaternions, between a blend).
/// The instance at `joint_offset` must skin with dual quaternions this frame (a
/// [`super::Skinning`] other than linear) for its dual quaternions to be written.
///
/// Errors: as [`skin_on_gpu`]; a `dual_amount` above 0 (or NaN) when the animator keeps
/// no dual quaternions ([`Error::Binding`]).
pub fn skin_on_gpu_blended(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    animator: &Animator,
    joint_offset: u32,
    dual_amount: f32,
    vertices: &[SkinVertex],
) -> Result<Vec<SkinnedPoint>> {
    skin_job(device, queue, animator, [joint_offset, 0], dual_amount, None, vertices)
}

/// Instance `instance`'s skinning of `vertices` (the bind pose of the mesh `targets` belong to)
/// morphed first by its morph weights, as a renderer drawing it with
/// [`super::SkinBinding::morph`] does (the skinning module's `wgpu_anim_morph`, then
/// `wgpu_anim_skin_blended_at` with the instance's dual-quaternion amount), written to a buffer
/// and read back: what tests compare with [`crate::cpu::morph`] and the f64 reference.
///
/// Errors: as [`skin_on_gpu_blended`]; an instance that does not exist or is not in page 0, or
/// an animator without morph weights ([`Error::Binding`]).
pub fn skin_on_gpu_morphed(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    animator: &Animator,
    instance: usize,
    targets: &super::GpuMorphTargets,
    vertices: &[SkinVertex],
) -> Result<Vec<SkinnedPoint>> {
    let what = || {
        format!(
            "morphing and skinning {} vertices of instance {instance}",
            vertices.len()
        )
    };
    let inst = match animator.controller().page_of(instance) {
        Some((0, _)) => animator.controller().instances()[instance],
        _ => {
            return Err(Error::Binding {
                what: what(),
                reason: "no such instance in page 0".to_owned(),
            });
        }
    };
    if animator.page_morph_weight_buffer(0).is_none() {
        return Err(Error::Binding {
            what: what(),
            reason: "the animator keeps no morph weights (AnimatorDesc::morph_weights)".to_owned(),
        });
    }
    let job = [inst.joint_offset, instance as u32];
    skin_job(
        device,
        queue,
        animator,
        job,
        inst.dual_quaternion,
        Some(targets),
        vertices,
    )
}

/// The `skin` entry of the built-in shader over `vertices` with `job` (joint offset, instance in
/// page 0), morphed when `targets` are given.
fn skin_job(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    animator: &Animator,
    [joint_offset, instance]: [u32; 2],
    dual_amount: f32,
    targets: Option<&super::GpuMorphTargets>,
    vertices: &[SkinVertex],
) -> Result<Vec<SkinnedPoint>> {
    if vertices.is_empty() {
        return Ok(Vec::new());
    }
    let dual = animator.page_dual_palette_buffer(0);
    if (dual_amount.is_nan() || dual_amount > 0.0) && dual.is_none() {
        return Err(Error::Binding {
            what: format!("skinning {} vertices with dual quaternions", vertices.len()),
            reason: format!(
                "dual amount {dual_amount}, and the animator keeps no dual quaternions (AnimatorDesc::dual_quaternion)"
            ),
        });
    }
    let Ok(count) = u32::try_from(vertices.len()) else {
        return Err(Error::Limit {
            what: format!("{} vertices to skin, at most u32::MAX", vertices.len()),
        });
    };
    let skin = super::SkinBinding {
        morph: targets.is_some(),
        ..super::renderer::built_in_binding(animator)
    };
    let source = built_in_skin_source(skin)?;
    let morph = targets.and_then(|t| {
        let instances = animator.page_instance_buffer(0)?;
        Some((instances, animator.page_morph_weight_buffer(0)?, t.buffer()))
    });
    // Buffers, pipeline and bind group: what the device refuses is an error.
    let (pipeline, bind_group, output) = super::refusable_now(
        device,
        || format!("the skinning pass of {count} vertices"),
        || {
            let job: [u32; 4] = [joint_offset, count, dual_amount.max(0.0).to_bits(), instance];
            let job = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("skin job"),
                contents: bytemuck::cast_slice(&job),
                usage: wgpu::BufferUsages::UNIFORM,
            });
            let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("skin input"),
                contents: bytemuck::cast_slice(vertices),
                usage: wgpu::BufferUsages::STORAGE,
            });
            let output = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("skin output"),
                size: (vertices.len() * size_of::<SkinnedPoint>()) as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("wgpu-anim skin"),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("wgpu-anim skin"),
                layout: None,
                module: &module,
                entry_point: Some("skin"),
                compilation_options: Default::default(),
                cache: None,
            });
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("wgpu-anim skin"),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: animator.palette_buffer().as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 8,
                        resource: job.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 9,
                        resource: input.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 10,
                        resource: output.as_entire_binding(),
                    },
                ]
                .into_iter()
                .chain(dual.map(|d| wgpu::BindGroupEntry {
                    binding: skin.dual_palette(),
                    resource: wgpu::BindingResource::Buffer(d),
                }))
                .chain(morph.into_iter().flat_map(|(instances, weights, targets)| {
                    [
                        wgpu::BindGroupEntry {
                            binding: skin.instances(),
                            resource: instances.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: skin.morph_weights(),
                            resource: wgpu::BindingResource::Buffer(weights),
                        },
                        wgpu::BindGroupEntry {
                            binding: skin.morph_targets(),
                            resource: targets.as_entire_binding(),
                        },
                    ]
                }))
                .collect::<Vec<_>>(),
            });
            (pipeline, bind_group, output)
        },
    )?;
    run_vertex_pass(device, queue, &pipeline, &bind_group, &output, count)
}

/// Runs `pipeline` over `count` vertices, a thread each, and reads the points it wrote to
/// `output` back.
fn run_vertex_pass(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    pipeline: &wgpu::ComputePipeline,
    bind_group: &wgpu::BindGroup,
    output: &wgpu::Buffer,
    count: u32,
) -> Result<Vec<SkinnedPoint>> {
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        let (x, y) = split_dispatch(
            count.div_ceil(WORKGROUP_SIZE),
            device.limits().max_compute_workgroups_per_dimension,
        );
        pass.dispatch_workgroups(x, y, 1);
    }
    queue.submit([encoder.finish()]);
    read_buffer(device, queue, output, 0, u64::from(count))
}

/// Instance `instance`'s vertices (of page 0) as its VAT `vat` plays them this frame — the clip
/// and time its clock stage left in its instance ([`crate::layout::GpuInstance::vat`],
/// `vat_time`) — in a compute pass (the `vat` entry of `shaders/skin.wgsl`, the skinning
/// module's `wgpu_anim_vat`, as the VAT draw plays them), in model space: what tests compare
/// with [`crate::vat::Vat::vertex`] and with skinning.
///
/// Errors: an instance that does not exist or is not in page 0 ([`Error::Binding`]); buffers or
/// a pipeline the device refuses ([`crate::Error::Refused`]), a failed read-back.
pub fn play_vat_on_gpu(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    animator: &Animator,
    instance: usize,
    vat: &super::GpuVat,
) -> Result<Vec<SkinnedPoint>> {
    let count = vat.vertex_count();
    let (Some((0, _)), Some(instances)) = (
        animator.controller().page_of(instance),
        animator.page_instance_buffer(0),
    ) else {
        return Err(Error::Binding {
            what: format!("playing the VAT of instance {instance}"),
            reason: "no such instance in page 0".to_owned(),
        });
    };
    if count == 0 {
        return Ok(Vec::new());
    }
    let skin = super::SkinBinding {
        vat: true,
        ..super::renderer::built_in_binding(animator)
    };
    let source = built_in_skin_source(skin)?;
    let (pipeline, bind_group, output) = super::refusable_now(
        device,
        || format!("the VAT pass of {count} vertices"),
        || {
            let job = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("vat job"),
                contents: bytemuck::cast_slice(&[0, count, 0, instance as u32]),
                usage: wgpu::BufferUsages::UNIFORM,
            });
            let output = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("vat output"),
                size: u64::from(count) * size_of::<SkinnedPoint>() as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("wgpu-anim vat"),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("wgpu-anim vat"),
                layout: None,
                module: &module,
                entry_point: Some("vat"),
                compilation_options: Default::default(),
                cache: None,
            });
            fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
                wgpu::BindGroupEntry {
                    binding,
                    resource: buffer.as_entire_binding(),
                }
            }
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("wgpu-anim vat"),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[
                    entry(skin.instances(), instances),
                    entry(skin.vat_binding(), vat.buffer()),
                    entry(8, &job),
                    entry(10, &output),
                ],
            });
            (pipeline, bind_group, output)
        },
    )?;
    run_vertex_pass(device, queue, &pipeline, &bind_group, &output, count)
}
