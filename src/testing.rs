//! Harnesses for tests and tools, not part of the runtime: each builds what it needs (an
//! animator of its own, or a compute pipeline over an animator's buffers), runs it on the GPU and
//! reads the result back, waiting for it (native only). The conformance tests compare what they
//! return with the CPU mirrors and the f64 reference; the `wgpu-anim` tool samples with them. A
//! renderer never needs them: they exist only with the `testing` feature (which `tools`
//! enables), so a build with `default-features = false` leaves them out.

use crate::cpu::{Pose, SkinnedPoint};
use crate::error::{Error, Result};
use crate::gpu::wgpu_util::{uniform_buffer_init, wgsl_module};
use crate::gpu::{
    self, Animator, AnimatorDesc, InstanceDesc, LoopMode, built_in_skin_source, read_buffer, split_dispatch,
};
use crate::layout::{MAX_SOCKETS, WORKGROUP_SIZE};
use crate::library::{AnimationLibrary, ClipId};
use crate::mesh::SkinVertex;
use wgpu::util::DeviceExt;

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
/// [`gpu::Skinning`] other than linear) for its dual quaternions to be written.
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
/// [`gpu::SkinBinding::morph`] does (the skinning module's `wgpu_anim_morph`, then
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
    targets: &gpu::GpuMorphTargets,
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
    targets: Option<&gpu::GpuMorphTargets>,
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
    let skin = gpu::SkinBinding {
        morph: targets.is_some(),
        ..gpu::built_in_binding(animator)
    };
    let source = built_in_skin_source(skin)?;
    let morph = targets.and_then(|t| {
        let instances = animator.page_instance_buffer(0)?;
        Some((instances, animator.page_morph_weight_buffer(0)?, t.buffer()))
    });
    // Buffers, pipeline and bind group: what the device refuses is an error.
    let (pipeline, bind_group, output) = gpu::refusable_now(
        device,
        || format!("the skinning pass of {count} vertices"),
        || {
            let job: [u32; 4] = [joint_offset, count, dual_amount.max(0.0).to_bits(), instance];
            let job = uniform_buffer_init(device, "skin job", bytemuck::cast_slice(&job));
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
            let module = wgsl_module(device, "wgpu-anim skin", &source);
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
    vat: &gpu::GpuVat,
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
    let skin = gpu::SkinBinding {
        vat: true,
        ..gpu::built_in_binding(animator)
    };
    let source = built_in_skin_source(skin)?;
    let (pipeline, bind_group, output) = gpu::refusable_now(
        device,
        || format!("the VAT pass of {count} vertices"),
        || {
            let job = uniform_buffer_init(device, "vat job", bytemuck::cast_slice(&[0, count, 0, instance as u32]));
            let output = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("vat output"),
                size: u64::from(count) * size_of::<SkinnedPoint>() as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let module = wgsl_module(device, "wgpu-anim vat", &source);
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

/// How [`simulate_gpu`] runs its animator.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct GpuSimulation {
    /// The animator (its `max_instances` is the script's count; inertialization is on).
    pub desc: AnimatorDesc,
    /// The fused path (where the device has it), else the staged one.
    pub fused: bool,
    /// Every character evaluated every this many frames (update-rate LOD: the animator culls).
    pub update_rate: Option<u32>,
}

impl GpuSimulation {
    /// With `desc`.
    #[must_use]
    pub fn with_desc(mut self, desc: AnimatorDesc) -> Self {
        self.desc = desc;
        self
    }

    /// On the fused path or the staged one.
    #[must_use]
    pub fn with_fused(mut self, fused: bool) -> Self {
        self.fused = fused;
        self
    }

    /// Every character evaluated every `frames` frames (1, 2, 4 or 8).
    #[must_use]
    pub fn with_update_rate(mut self, frames: u32) -> Self {
        self.update_rate = Some(frames);
        self
    }
}

/// Runs `script` on the GPU ([`crate::machine::simulate`]): an animator of the script's
/// characters, each following machine `machine` from its entry state, the script's parameters set
/// through the controller before each frame, one frame of `dt`, and each character's machine
/// and events read back (waiting for the GPU) into the report the CPU mirror's run gives
/// ([`crate::machine::simulate::simulate_cpu`]). On a device of WebGPU's default limits, run as
/// `how` says.
///
/// Errors: the script's (as [`crate::machine::simulate::script_writes`]); no clip of the
/// machine's skeleton; what the animator or the device refuses.
pub fn simulate_gpu(
    library: &AnimationLibrary,
    machine: crate::machine::MachineId,
    script: &crate::machine::simulate::Script,
    how: &GpuSimulation,
) -> Result<Vec<crate::machine::simulate::FrameReport>> {
    use crate::cpu::machine::MachineEvent;
    use crate::layout::MACHINE_EVENT_CLIP;
    use crate::machine::simulate::{FrameReport, report, script_writes};
    script_writes(library, machine, script)?;
    let (device, queue) = gpu::headless_device_with_limits(wgpu::Limits::default())?;
    let n = script.characters;
    let skeleton = library.machines().skeletons[machine.check(library.tag())? as usize];
    let clip = (0..library.clips().len() as u32)
        .find(|&c| library.clips()[c as usize].skeleton == skeleton)
        .and_then(|c| library.clip_at(c))
        .ok_or_else(|| Error::Limit {
            what: "the machine's skeleton has no clip".into(),
        })?;
    let desc = AnimatorDesc {
        max_instances: n.max(1),
        inertialization: true,
        culling: how.desc.culling || how.update_rate.is_some(),
        ..how.desc
    };
    let mut a = Animator::new(&device, library, &desc)?;
    a.set_fused(how.fused)?;
    // Room for the most a frame of the rules appends per character (six events), and clip events.
    a.watch_events(&device, 16 * n.max(1))?;
    for c in 0..n as usize {
        a.controller_mut().add_instance(&InstanceDesc::new(clip))?;
        a.controller_mut().set_machine(c, Some(machine))?;
        if let Some(rate) = how.update_rate {
            a.controller_mut().set_update_rate(c, Some(rate))?;
        }
    }
    let mut out = Vec::with_capacity(script.frames as usize);
    for f in 0..script.frames {
        for e in script.events.iter().filter(|e| e.frame == f) {
            let c = e.character as usize;
            if e.reset {
                a.controller_mut().reset_machine(c)?;
            }
            for (name, &value) in &e.set {
                a.controller_mut().set_parameter(c, name, value)?;
            }
        }
        a.prepare(&queue, script.dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder)?;
        queue.submit([encoder.finish()]);
        let (records, overflow) = a.read_events(&device, &queue)?;
        if overflow > 0 {
            return Err(Error::Limit {
                what: format!("frame {f}: {overflow} events did not fit the log"),
            });
        }
        let mut states = Vec::with_capacity(n as usize);
        for page in 0..a.controller().pages_in_use() {
            states.extend(a.read_machines_page(&device, &queue, page)?.0);
        }
        let mut characters = Vec::with_capacity(n as usize);
        for (c, ms) in states.iter().enumerate().take(n as usize) {
            // One thread appends a character's records, in the order the rules emit them.
            let events: Vec<MachineEvent> = records
                .iter()
                .filter(|r| r.clip == MACHINE_EVENT_CLIP && r.character == c as u32)
                .map(|r| MachineEvent {
                    kind: r.event,
                    index: r.state,
                })
                .collect();
            characters.push(report(library, machine, c as u32, ms, &events)?);
        }
        out.push(FrameReport { frame: f, characters });
    }
    Ok(out)
}
