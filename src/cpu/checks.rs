//! What the CPU mirror's entry points check before they run a kernel, shared by several stages:
//! buffer lengths against the frame, each instance's skeleton and joints, the clips, trees and
//! layer definitions the clock follows. Each stage's own checks are in its module, above its
//! entry point; what they refuse is an error naming the instance (its index in the page; 0 for a
//! function of one instance) and what is wrong.
//!
//! The animator's controller never makes what these refuse (it checks the same at its own API);
//! the checks are for data built by hand, as tests and tools do. Each check is one pass over the
//! instances and their blend lists, small beside the work of the stage.

use crate::error::{Error, Result};
use crate::layout::{
    GpuClip, GpuFrame, GpuInstance, GpuLayerDef, GpuSkeleton, LAYER_ON, MAX_LAYERS, MAX_SOCKETS, MAX_TREE_NODES,
    source_kind,
};
use crate::library::AnimationLibrary;

pub(crate) fn instance_error(i: usize, what: String) -> Error {
    Error::Instance { instance: i, what }
}

/// The frame's instance count, when every per-instance buffer holds that many records.
pub(crate) fn instance_count(frame: &GpuFrame, buffers: &[(&str, usize)]) -> Result<usize> {
    let n = frame.instance_count as usize;
    for &(name, len) in buffers {
        if len < n {
            return Err(Error::Limit {
                what: format!("the frame has {n} instances, but {name} holds {len}"),
            });
        }
    }
    Ok(n)
}

/// A pose buffer of `len` entries that the frame's instances (joints up to `end`) read or write
/// in region `region`: from `region · frame.snapshot_offset` on (0: current poses, snapshots or
/// matrices, 1: mesh-space deltas or the velocities of inertialized transitions).
pub(crate) fn pose_buffer(frame: &GpuFrame, name: &str, len: usize, region: u64, end: u64) -> Result<()> {
    if end == 0 {
        return Ok(());
    }
    let need = region * u64::from(frame.snapshot_offset) + end;
    if (len as u64) < need {
        return Err(Error::Limit {
            what: format!(
                "{name} holds {len} entries; the frame's joints (up to {end}, capacity {}) need {need}",
                frame.snapshot_offset
            ),
        });
    }
    Ok(())
}

/// The dual palettes (`len` entries) hold the joints of every instance the palette stage writes
/// dual quaternions for: those with a dual-quaternion amount above 0, when the frame keeps them.
pub(crate) fn dual_room(frame: &GpuFrame, instances: &[GpuInstance], len: usize) -> Result<()> {
    if frame.flags & crate::layout::FRAME_DUAL_QUATERNION == 0 {
        return Ok(());
    }
    for (i, inst) in instances.iter().enumerate() {
        let end = u64::from(inst.joint_offset) + u64::from(inst.joint_count);
        if inst.dual_quaternion > 0.0 && end > len as u64 {
            return Err(instance_error(
                i,
                format!("skins with dual quaternions up to joint slot {end}; the dual palettes hold {len}"),
            ));
        }
    }
    Ok(())
}

/// Where the joints of `instances` end (0 without any).
pub(crate) fn joint_end(instances: &[GpuInstance]) -> u64 {
    instances
        .iter()
        .map(|i| u64::from(i.joint_offset) + u64::from(i.joint_count))
        .max()
        .unwrap_or(0)
}

/// The palette buffer's socket region: with sockets, `frame.snapshot_offset` on, `MAX_SOCKETS`
/// per instance; and every socket of each instance on one of its first `joint_limit(inst)` joints.
pub(crate) fn socket_room(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    instances: &[GpuInstance],
    palettes: usize,
    joint_limit: impl Fn(&GpuInstance) -> u32,
) -> Result<()> {
    let mut any = false;
    for (i, inst) in instances.iter().enumerate() {
        let skel = lib.gpu_skeletons()[inst.skeleton as usize];
        let count = skel.socket_count.min(MAX_SOCKETS) as usize;
        let first = (inst.skeleton * MAX_SOCKETS) as usize;
        for (k, socket) in lib.gpu_sockets()[first..first + count].iter().enumerate() {
            if socket.joint >= joint_limit(inst) {
                return Err(instance_error(
                    i,
                    format!(
                        "socket {k} follows joint {}, past the {} joints animated",
                        socket.joint,
                        joint_limit(inst)
                    ),
                ));
            }
        }
        any |= count > 0;
    }
    if any {
        let need = u64::from(frame.snapshot_offset) + instances.len() as u64 * u64::from(MAX_SOCKETS);
        if (palettes as u64) < need {
            return Err(Error::Limit {
                what: format!("the palette buffer holds {palettes} entries; the frame's socket matrices need {need}"),
            });
        }
    }
    Ok(())
}

/// Instance `i`'s skeleton (one of the library's, with at least the instance's joints) and
/// joints (within the frame's joint capacity).
pub(crate) fn joints<'a>(
    lib: &'a AnimationLibrary,
    frame: &GpuFrame,
    i: usize,
    inst: &GpuInstance,
) -> Result<&'a GpuSkeleton> {
    let skel = lib.gpu_skeletons().get(inst.skeleton as usize).ok_or_else(|| {
        instance_error(
            i,
            format!(
                "skeleton {} does not exist (the library has {})",
                inst.skeleton,
                lib.gpu_skeletons().len()
            ),
        )
    })?;
    if inst.joint_count > skel.joint_count {
        return Err(instance_error(
            i,
            format!(
                "animates {} joints, but skeleton {} has {}",
                inst.joint_count, inst.skeleton, skel.joint_count
            ),
        ));
    }
    let end = u64::from(inst.joint_offset) + u64::from(inst.joint_count);
    if end > u64::from(frame.snapshot_offset) {
        return Err(instance_error(
            i,
            format!(
                "joints {}..{end} lie beyond the frame's joint capacity ({})",
                inst.joint_offset, frame.snapshot_offset
            ),
        ));
    }
    Ok(skel)
}

/// Clip `clip` of the library, which instance `i` names (`what`: where, as a message prefix).
pub(crate) fn clip<'a>(lib: &'a AnimationLibrary, i: usize, what: &str, clip: u32) -> Result<&'a GpuClip> {
    lib.clips().get(clip as usize).ok_or_else(|| {
        instance_error(
            i,
            format!(
                "{what}clip {clip} does not exist (the library has {})",
                lib.clips().len()
            ),
        )
    })
}

/// A state `play_state` advances: a clip, or `tree_nodes` blend nodes from `tree_offset`.
pub(crate) fn state(
    lib: &AnimationLibrary,
    i: usize,
    what: &str,
    c: u32,
    tree_offset: u32,
    tree_nodes: u32,
) -> Result<()> {
    if tree_nodes == 0 {
        return clip(lib, i, what, c).map(|_| ());
    }
    let nodes = lib.blend().nodes.len();
    let end = u64::from(tree_offset) + u64::from(tree_nodes.min(MAX_TREE_NODES));
    if end > nodes as u64 {
        return Err(instance_error(
            i,
            format!("{what}blend nodes {tree_offset}..{end} lie beyond the library's {nodes}"),
        ));
    }
    Ok(())
}

/// What `advance_instance` follows from instance `i`: its clip or tree, its cross-fade's source
/// (unless a snapshot), and the definitions of its layers that are on, with their clips or trees.
pub(crate) fn targets(lib: &AnimationLibrary, layer_defs: &[GpuLayerDef], i: usize, inst: &GpuInstance) -> Result<()> {
    state(lib, i, "", inst.clip, inst.tree_offset, inst.tree_nodes)?;
    let kind = inst.source_kind();
    if kind != source_kind::NONE && kind != source_kind::SNAPSHOT {
        let nodes = if kind == source_kind::TREE {
            inst.source_tree_nodes
        } else {
            0
        };
        state(
            lib,
            i,
            "cross-fade source: ",
            inst.source_clip,
            inst.source_tree_offset,
            nodes,
        )?;
    }
    for k in 0..MAX_LAYERS as usize {
        if inst.flags & (LAYER_ON << k) == 0 {
            continue;
        }
        let d = inst.layers[k].def;
        let def = layer_defs.get(d as usize).ok_or_else(|| {
            instance_error(
                i,
                format!("layer {k}: definition {d} does not exist ({} given)", layer_defs.len()),
            )
        })?;
        state(
            lib,
            i,
            &format!("layer {k}: "),
            def.clip,
            def.tree_offset,
            def.tree_nodes,
        )?;
    }
    Ok(())
}

/// The machines of the first `n` instances of `page` that have one ([`crate::layout::MACHINE`]):
/// the page's machine sections hold them, and each names a machine of `lib` and states and a
/// transition of it.
pub(crate) fn machines(lib: &AnimationLibrary, page: &crate::cpu::PageBuffers<'_>, n: usize) -> Result<()> {
    use crate::layout::{GpuMachineState, MACHINE, MACHINE_NONE, MAX_MACHINE_PARAMETERS};
    use crate::shaders::Resource;
    let with_machine: Vec<usize> = (0..n).filter(|&i| page.instances[i].flags & MACHINE != 0).collect();
    if with_machine.is_empty() {
        return Ok(());
    }
    let section = |r: Resource| {
        page.sections
            .iter()
            .find(|(s, _)| *s == r)
            .map_or(&[][..], |(_, b)| &**b)
    };
    let states_bytes = section(Resource::MachineStates);
    let states = states_bytes.len() / size_of::<GpuMachineState>();
    let slots = section(Resource::MachineParameters).len() / (4 * MAX_MACHINE_PARAMETERS as usize);
    for &i in &with_machine {
        if i >= states || i >= slots {
            return Err(Error::Instance {
                instance: i,
                what: format!(
                    "has a state machine, but the page's machine sections hold {states} states and {slots} \
                     parameter sets (PageBuffers::section gives them)"
                ),
            });
        }
        let record = &states_bytes[i * size_of::<GpuMachineState>()..][..size_of::<GpuMachineState>()];
        let ms: GpuMachineState = bytemuck::pod_read_unaligned(record);
        let machines = lib.machines();
        let Some(m) = machines.machines.get(ms.machine as usize) else {
            return Err(Error::Instance {
                instance: i,
                what: format!(
                    "machine {} does not exist ({} in the library)",
                    ms.machine,
                    machines.machines.len()
                ),
            });
        };
        let running = ms.transition != MACHINE_NONE;
        if ms.current >= m.state_count
            || (running && (ms.destination >= m.state_count || ms.transition >= m.transition_count))
        {
            return Err(Error::Instance {
                instance: i,
                what: format!(
                    "its machine names state {} (or destination {}, transition {}) beyond machine {}'s",
                    ms.current, ms.destination, ms.transition, ms.machine
                ),
            });
        }
    }
    Ok(())
}
