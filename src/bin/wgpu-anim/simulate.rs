//! `wgpu-anim simulate`: a state machine run over a script, printed per frame and character.

use crate::SimulateArgs;
use wgpu_anim::machine::StateMachine;
use wgpu_anim::machine::simulate::{FrameReport, Script, simulate_cpu};
use wgpu_anim::{AnimationLibrary, Clip, LibraryBuilder, MachineId};

pub(crate) fn simulate(a: &SimulateArgs) -> Result<(), String> {
    let machine = StateMachine::load(&a.machine).map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(&a.script).map_err(|e| format!("{}: {e}", a.script.display()))?;
    let script: Script = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", a.script.display()))?;
    let (lib, id) = library(a, &machine)?;
    let frames = if a.cpu {
        simulate_cpu(&lib, id, &script).map_err(|e| e.to_string())?
    } else {
        let how = wgpu_anim::testing::GpuSimulation::default();
        wgpu_anim::testing::simulate_gpu(&lib, id, &script, &how).map_err(|e| e.to_string())?
    };
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&frames).map_err(|e| e.to_string())?);
    } else {
        print_lines(&frames)?;
    }
    Ok(())
}

/// The library the machine's states play: the glTF file's first skeleton and its clips (or the
/// mannequin and its, with its locomotion blend space), the rest-pose clips of `--clip`, and the
/// machine.
fn library(a: &SimulateArgs, machine: &StateMachine) -> Result<(AnimationLibrary, MachineId), String> {
    let mut b = LibraryBuilder::new();
    let (skeleton, clips) = match &a.library {
        Some(path) => {
            let imp = wgpu_anim::offline::gltf_import::load(path).map_err(|e| e.to_string())?;
            let s = imp
                .primary_skeleton()
                .ok_or_else(|| format!("{}: nothing to animate (no nodes)", path.display()))?;
            let sk = &imp.skeletons[s];
            (sk.skeleton.clone(), sk.clips.iter().map(|c| c.clip.clone()).collect())
        }
        None => {
            let skeleton = wgpu_anim::mannequin::skeleton();
            let clips = wgpu_anim::mannequin::clips(&skeleton);
            (skeleton, clips)
        }
    };
    let mut extra = Vec::new();
    for spec in &a.clips {
        let (name, seconds) = spec
            .split_once('=')
            .and_then(|(n, s)| Some((n.trim(), s.trim().parse::<f32>().ok()?)))
            .ok_or_else(|| format!("--clip '{spec}' is not NAME=SECONDS"))?;
        extra.push(Clip::rest_pose(name, seconds));
    }
    let s = b.add_skeleton(skeleton);
    let mut ids = Vec::new();
    for clip in clips.iter().chain(&extra) {
        ids.push(b.add_clip(s, clip).map_err(|e| e.to_string())?);
    }
    if a.library.is_none() {
        // The mannequin's locomotion blend space, for states that play a tree.
        b.add_blend_tree(&wgpu_anim::mannequin::locomotion_tree(&ids))
            .map_err(|e| e.to_string())?;
    }
    let id = b
        .add_state_machine(s, machine)
        .map_err(|e| format!("{}: {e}", a.machine.display()))?;
    Ok((b.build(), id))
}

/// One line per frame and character: `frame character state time [transition] [events]`.
fn print_lines(frames: &[FrameReport]) -> Result<(), String> {
    for f in frames {
        for c in &f.characters {
            out!("{:>5} {:>3}  {} {:.6}", f.frame, c.character, c.state, c.time);
            if let Some(t) = &c.transition {
                out!(
                    "  transition {} {} -> {} weight {:.4} (destination at {:.6})",
                    t.index,
                    t.source,
                    t.destination,
                    t.weight,
                    t.destination_time
                );
            }
            for e in &c.events {
                let what = e
                    .state
                    .clone()
                    .unwrap_or_else(|| e.transition.map_or(String::new(), |t| t.to_string()));
                out!("  {}({what})", e.kind);
            }
            outln!();
        }
    }
    Ok(())
}
