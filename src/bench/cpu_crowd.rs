//! The CPU mirror's crowd: its buffers in chunks of contiguous characters, one per thread, and
//! a frame of its stages over them.

#[allow(clippy::wildcard_imports)]
use super::*;

/// The CPU mirror's buffers for a contiguous run of characters, joint offsets rebased to 0, the
/// local poses followed by room for their mesh-space deltas, and their snapshots.
#[derive(Clone, Debug)]
pub struct CpuChunk {
    frame: GpuFrame,
    layer_defs: Vec<GpuLayerDef>,
    instances: Vec<GpuInstance>,
    clocks: Vec<GpuClock>,
    lists: Vec<BlendList>,
    local: Vec<LocalPose>,
    history: Vec<LocalPose>,
    model: Vec<Affine>,
    palette: Vec<Affine>,
    /// The characters' state machines and parameter slots, empty when none follows one.
    machine_states: Vec<crate::layout::GpuMachineState>,
    machine_parameters: Vec<cpu::machine::Slots>,
}

/// The CPU mirror's state for a whole crowd, split into contiguous chunks of characters (one per
/// thread). Each chunk holds its characters' instances — joint offsets rebased to the chunk's
/// first joint, which works because joint offsets are allocated in order — and the matching
/// ranges of clocks, blend lists and poses, so the `cpu` stage functions run unchanged on it.
#[derive(Clone, Debug)]
pub struct CpuCrowd {
    chunks: Vec<CpuChunk>,
}

impl CpuCrowd {
    /// The crowd of `animator` as the GPU holds it, read back (waits for the GPU), in `chunks`
    /// chunks of about equal size.
    pub fn from_gpu(device: &wgpu::Device, queue: &wgpu::Queue, animator: &Animator, chunks: usize) -> Result<Self> {
        // Every page read back and laid end to end, joint offsets rebased to the whole crowd.
        let (mut clocks, mut lists, mut snapshots, mut instances) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut machine_states, mut machine_parameters) = (Vec::new(), Vec::new());
        let mut pose = cpu::Pose::default();
        for page in 0..animator.controller().pages_in_use() {
            let base = pose.local.len() as u32;
            let (c, p) = animator.read_back_page(device, queue, page)?;
            clocks.extend(c);
            pose.local.extend(p.local);
            pose.model.extend(p.model);
            pose.palette.extend(p.palette);
            lists.extend(animator.read_blend_lists_page(device, queue, page)?);
            snapshots.extend(animator.read_local_region_page(device, queue, page, 1)?);
            instances.extend(animator.controller().page_instances(page).iter().map(|i| GpuInstance {
                joint_offset: i.joint_offset + base,
                ..*i
            }));
            if animator
                .controller()
                .page_instances(page)
                .iter()
                .any(machine::follows_machine)
            {
                let (states, slots) = animator.read_machines_page(device, queue, page)?;
                machine_states.resize(instances.len() - states.len(), Default::default());
                machine_parameters.resize(instances.len() - slots.len(), Default::default());
                machine_states.extend(states);
                machine_parameters.extend(slots);
            }
        }
        if !machine_states.is_empty() {
            machine_states.resize(instances.len(), Default::default());
            machine_parameters.resize(instances.len(), Default::default());
        }
        let n = instances.len();
        let socket_slots = if animator.controller().library().has_sockets() {
            crate::layout::MAX_SOCKETS as usize
        } else {
            0
        };
        let chunks = chunks.clamp(1, n.max(1));
        let mut out = Vec::with_capacity(chunks);
        for c in 0..chunks {
            let range = n * c / chunks..n * (c + 1) / chunks;
            let sub = &instances[range.clone()];
            let first = sub.first().map_or(0, |i| i.joint_offset);
            let end = sub.last().map_or(first, |i| i.joint_offset + i.joint_count);
            let joints = (first as usize)..(end as usize);
            let rebased: Vec<GpuInstance> = sub
                .iter()
                .map(|i| GpuInstance {
                    joint_offset: i.joint_offset - first,
                    ..*i
                })
                .collect();
            out.push(CpuChunk {
                frame: GpuFrame {
                    dt: DT,
                    instance_count: rebased.len() as u32,
                    snapshot_offset: end - first,
                    ..Default::default()
                },
                layer_defs: animator.controller().layer_defs().to_vec(),
                instances: rebased,
                clocks: clocks[range.clone()].to_vec(),
                lists: lists[range.clone()].to_vec(),
                // The current poses and room for mesh-space deltas; the snapshots.
                local: [
                    &pose.local[joints.clone()],
                    &vec![LocalPose::default(); joints.len()][..],
                ]
                .concat(),
                history: snapshots[joints.clone()].to_vec(),
                model: pose.model[joints.clone()].to_vec(),
                palette: [
                    &pose.palette[joints][..],
                    // The socket matrices after the palettes, as on the GPU.
                    &vec![bytemuck::Zeroable::zeroed(); socket_slots * sub.len()][..],
                ]
                .concat(),
                machine_states: machine_states.get(range.clone()).map_or_else(Vec::new, <[_]>::to_vec),
                machine_parameters: machine_parameters
                    .get(range.clone())
                    .map_or_else(Vec::new, <[_]>::to_vec),
            });
        }
        Ok(Self { chunks: out })
    }

    /// Number of chunks (threads).
    #[must_use]
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }

    /// Runs stage `stage` of the mirror over every chunk: on the calling thread when there is one
    /// chunk, else on one scoped thread per chunk, returning when all are done.
    pub fn run_stage(&mut self, lib: &AnimationLibrary, stage: Stage) {
        if let [one] = self.chunks.as_mut_slice() {
            one.run(lib, stage);
            return;
        }
        std::thread::scope(|s| {
            for chunk in &mut self.chunks {
                s.spawn(move || chunk.run(lib, stage));
            }
        });
    }

    /// One frame: the four stages in order; returns each stage's wall-clock milliseconds.
    pub fn frame(&mut self, lib: &AnimationLibrary) -> [f64; 4] {
        let mut ms = [0.0; 4];
        for (k, stage) in Stage::COMPUTE.into_iter().enumerate() {
            let start = Instant::now();
            self.run_stage(lib, stage);
            ms[k] = start.elapsed().as_secs_f64() * 1e3;
        }
        ms
    }

    /// Every character's palette, in character order.
    #[must_use]
    pub fn palettes(&self) -> Vec<Affine> {
        self.chunks
            .iter()
            .flat_map(|c| c.palette[..c.frame.snapshot_offset as usize].iter().copied())
            .collect()
    }
}

impl CpuChunk {
    fn run(&mut self, lib: &AnimationLibrary, stage: Stage) {
        // The kernels alone: the chunk's buffers are the bench's own, laid out as the animator
        // lays out its pages, so the mirror's checks would only add to what is timed.
        let s = self;
        let mut page = cpu::PageBuffers::new(&s.frame, &mut s.instances)
            .layer_defs(&s.layer_defs)
            .clocks(&mut s.clocks)
            .blend_lists(&mut s.lists)
            .local_poses(&mut s.local)
            .pose_history(&mut s.history)
            .model_poses(&mut s.model)
            .palettes(&mut s.palette);
        if !s.machine_states.is_empty() {
            page = page
                .section(crate::shaders::Resource::MachineStates, &mut s.machine_states)
                .section(crate::shaders::Resource::MachineParameters, &mut s.machine_parameters);
        }
        match stage {
            Stage::Clock => cpu::clock::kernel(lib, &mut page),
            Stage::Sample => cpu::sample::kernel(lib, &mut page),
            Stage::LocalToModel => cpu::local_to_model::kernel(lib, &mut page),
            Stage::Palette => cpu::palette::kernel(lib, &mut page),
            Stage::Cull | Stage::Ik | Stage::Skin | Stage::Fused => {}
        }
    }
}
