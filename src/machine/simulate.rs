//! Scripted runs of a state machine: a script of parameter changes per frame and character at a
//! fixed `dt`, and what every character's machine did each frame (the interface of
//! `wgpu-anim simulate` and of the conformance checks).

use super::{MachineId, Value};
use crate::cpu::machine::{MachineEvent, Slots, loops_of, machine_step, transition_weight};
use crate::error::{Error, Result};
use crate::layout::{GpuMachineState, MACHINE_NONE, machine_event};
use crate::library::AnimationLibrary;
use std::collections::BTreeMap;

#[cfg(feature = "json")]
use serde::{Deserialize, Serialize};

/// A script: `characters` characters of one machine, `frames` frames of `dt` seconds, and the
/// parameter changes. In JSON:
/// `{"dt": 0.03125, "frames": 64, "characters": 2, "events": [{"frame": 3, "character": 1,
/// "set": {"speed": 1.5, "jump": true}}]}`.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize), serde(deny_unknown_fields))]
pub struct Script {
    /// Seconds per frame (a dyadic value such as 1/32 keeps every time exact).
    pub dt: f32,
    /// Frames to run.
    pub frames: u32,
    /// Characters, all starting in the entry state.
    #[cfg_attr(feature = "json", serde(default = "one"))]
    pub characters: u32,
    /// Parameter changes, applied before the frame they name (any order).
    #[cfg_attr(feature = "json", serde(default))]
    pub events: Vec<ScriptEvent>,
}

#[cfg(feature = "json")]
fn one() -> u32 {
    1
}

/// Parameter changes of one character before one frame.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize), serde(deny_unknown_fields))]
pub struct ScriptEvent {
    /// The frame (from 0) the change applies before.
    pub frame: u32,
    /// The character (from 0).
    pub character: u32,
    /// Back to the entry state at time 0 and the parameters' defaults, before `set`.
    #[cfg_attr(feature = "json", serde(default))]
    pub reset: bool,
    /// Parameter values by name: a trigger set with `true`, reset with `false`.
    #[cfg_attr(feature = "json", serde(default))]
    pub set: BTreeMap<String, Value>,
}

/// A running transition, as printed.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize))]
pub struct TransitionReport {
    /// Its index in the machine's transitions.
    pub index: u32,
    /// The state it leaves.
    pub source: String,
    /// The state it goes to.
    pub destination: String,
    /// `min(1, progress / duration)`.
    pub weight: f32,
    /// The destination's normalized time.
    pub destination_time: f64,
}

/// One event, as printed: a state's for `state_entered` and `state_exited`, a transition's for
/// the others.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize))]
pub struct EventReport {
    /// `state_entered`, `transition_ended`, `state_exited` or `transition_started`.
    pub kind: String,
    /// The state, for a state's event.
    #[cfg_attr(feature = "json", serde(skip_serializing_if = "Option::is_none", default))]
    pub state: Option<String>,
    /// The transition's index, for a transition's event.
    #[cfg_attr(feature = "json", serde(skip_serializing_if = "Option::is_none", default))]
    pub transition: Option<u32>,
}

/// One character after one frame.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize))]
pub struct CharacterReport {
    /// The character.
    pub character: u32,
    /// The state playing; while a transition runs, its source.
    pub state: String,
    /// That state's normalized time (loops, not wrapped).
    pub time: f64,
    /// The transition running after the frame.
    pub transition: Option<TransitionReport>,
    /// The frame's events, in order.
    pub events: Vec<EventReport>,
}

/// Every character after one frame.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "json", derive(Serialize, Deserialize))]
pub struct FrameReport {
    /// The frame (from 0).
    pub frame: u32,
    /// Each character.
    pub characters: Vec<CharacterReport>,
}

/// One character's changes before a frame: the character, whether it resets, and the parameter
/// slots written (slot, bits).
pub type SlotWrites = (u32, bool, Vec<(usize, u32)>);

/// The most characters a script runs (the frames' reports hold every one of them).
pub const MAX_SCRIPT_CHARACTERS: u32 = 1 << 16;

/// The script's changes as slot writes, per frame, each checked against the machine.
///
/// # Errors
///
/// [`Error::Machine`] naming the parameter (unknown, or a value of another kind), or
/// [`Error::Instance`] naming a character past the script's count; a `dt` not finite or negative.
pub fn script_writes(lib: &AnimationLibrary, machine: MachineId, script: &Script) -> Result<Vec<Vec<SlotWrites>>> {
    if !(script.dt.is_finite() && script.dt >= 0.0) {
        return Err(Error::Limit {
            what: format!("script dt {} must be finite and not negative", script.dt),
        });
    }
    if script.characters > MAX_SCRIPT_CHARACTERS {
        return Err(Error::Limit {
            what: format!(
                "the script has {} characters; a script runs at most {MAX_SCRIPT_CHARACTERS}",
                script.characters
            ),
        });
    }
    let mut frames = vec![Vec::new(); script.frames as usize];
    for e in &script.events {
        if e.character >= script.characters {
            return Err(Error::Instance {
                instance: e.character as usize,
                what: format!("the script has {} characters", script.characters),
            });
        }
        let values: Vec<(&str, Value)> = e.set.iter().map(|(k, &v)| (k.as_str(), v)).collect();
        let slots = super::parameter_slots(lib.machines(), machine, &values)?;
        if let Some(f) = frames.get_mut(e.frame as usize) {
            f.push((e.character, e.reset, slots));
        }
    }
    Ok(frames)
}

/// Runs `script` on the CPU mirror of the rules: every character's machine, frame by frame.
///
/// # Errors
///
/// As [`script_writes`]; [`Error::ForeignId`] for a machine of another library.
pub fn simulate_cpu(lib: &AnimationLibrary, machine: MachineId, script: &Script) -> Result<Vec<FrameReport>> {
    let writes = script_writes(lib, machine, script)?;
    let entry = lib.machines().entry_state(machine)?;
    let defaults = lib.machines().defaults(machine)?;
    let n = script.characters as usize;
    let mut states = vec![entry; n];
    let mut params: Vec<Slots> = vec![defaults; n];
    let mut out = Vec::with_capacity(script.frames as usize);
    let mut events = Vec::new();
    for (f, frame_writes) in writes.iter().enumerate() {
        for (c, reset, slots) in frame_writes {
            let c = *c as usize;
            if *reset {
                states[c] = entry;
                params[c] = defaults;
            }
            for &(k, bits) in slots {
                params[c][k] = bits;
            }
        }
        let mut characters = Vec::with_capacity(n);
        for c in 0..n {
            events.clear();
            machine_step(lib, &mut states[c], &mut params[c], script.dt, &mut events);
            characters.push(report(lib, machine, c as u32, &states[c], &events)?);
        }
        out.push(FrameReport {
            frame: f as u32,
            characters,
        });
    }
    Ok(out)
}

/// What a character's machine shows after a frame, with the frame's events.
///
/// # Errors
///
/// [`Error::ForeignId`] for a machine of another library.
pub fn report(
    lib: &AnimationLibrary,
    machine: MachineId,
    character: u32,
    ms: &GpuMachineState,
    events: &[MachineEvent],
) -> Result<CharacterReport> {
    let names = lib.machines().state_names(machine)?;
    let name = |s: u32| names.get(s as usize).cloned().unwrap_or_else(|| format!("#{s}"));
    let transition = (ms.transition != MACHINE_NONE).then(|| TransitionReport {
        index: ms.transition,
        source: name(ms.current),
        destination: name(ms.destination),
        weight: transition_weight(ms),
        destination_time: loops_of(ms.destination_time),
    });
    let events = events
        .iter()
        .map(|e| {
            let of_state = e.kind == machine_event::STATE_ENTERED || e.kind == machine_event::STATE_EXITED;
            EventReport {
                kind: machine_event::NAMES.get(e.kind as usize).unwrap_or(&"?").to_string(),
                state: of_state.then(|| name(e.index)),
                transition: (!of_state).then_some(e.index),
            }
        })
        .collect();
    Ok(CharacterReport {
        character,
        state: name(ms.current),
        time: loops_of(ms.time),
        transition,
        events,
    })
}
