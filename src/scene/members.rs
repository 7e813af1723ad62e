//! The crowd's members: laid out on the field, each an instance of the animator with its clip or
//! course, tint and layers.

use super::CrowdDesc;
use super::character::{Character, LayerAssets};
use super::rng::SplitMix;
use super::wander::{AIM_SLOT, ARM_SLOT, Agent, Role, Wander, random_course};
use crate::error::Result;
use crate::gpu::{Controller, InstanceDesc, Layer, LayerMode};
use glam::{Quat, Vec2, Vec3};

fn tint(r: &mut SplitMix) -> [u8; 4] {
    // Muted clothing colours: pick a hue, keep saturation and value moderate.
    let h = r.unit() * 6.0;
    let (s, v) = (r.range(0.25, 0.6), r.range(0.55, 0.9));
    let c = v * s;
    let x = c * (1.0 - ((h % 2.0) - 1.0).abs());
    let (r1, g1, b1) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    let to = |f: f32| ((f + m) * 255.0).round() as u8;
    [to(r1), to(g1), to(b1), 255]
}

/// Where a member starts: its place on the field and its heading.
#[derive(Clone, Copy)]
struct Start {
    position: Vec2,
    heading: f32,
}

/// `desc.count` members of `c` laid out on a jittered grid, each added to `controller`: wandering
/// ones when `c` has a locomotion tree and the crowd moves, else each playing one clip. Returns
/// them and half the side of the square field they occupy.
pub(super) fn add_members(controller: &mut Controller, c: &Character, desc: &CrowdDesc) -> Result<(Vec<Agent>, f32)> {
    let spacing = desc.spacing * c.relative_footprint;
    let side = (desc.count as f32).sqrt().ceil().max(1.0);
    let half_extent = side * spacing * 0.5;
    let mut r = SplitMix(desc.seed);
    let mut agents = Vec::with_capacity(desc.count as usize);
    for i in 0..desc.count {
        let (gx, gz) = ((i as f32 % side), (i as f32 / side).floor());
        let jitter = Vec2::new(r.range(-0.25, 0.25), r.range(-0.25, 0.25)) * spacing;
        let position = Vec2::new(gx + 0.5 - side * 0.5, gz + 0.5 - side * 0.5) * spacing + jitter;
        let pick = r.unit();
        let k = c.clip_shares.iter().position(|&s| pick < s).unwrap_or(0);
        let rate = r.range(0.85, 1.15);
        let heading = r.range(-std::f32::consts::PI, std::f32::consts::PI);
        let start = Start { position, heading };
        let agent = if let (Some(tree), true) = (c.locomotion, desc.moving) {
            add_wanderer(controller, c, &mut r, tree, start)?
        } else {
            add_player(controller, c, &mut r, start, k, rate, desc.moving)?
        };
        set_own_weights(controller, c, desc.seed, controller.instance_count() - 1)?;
        agents.push(agent);
    }
    Ok((agents, half_extent))
}

/// Member `index`'s own morph weights, when the animator keeps room for them: its mesh's
/// default weights (glTF `weights`), and where the mesh has the mannequin's expression target
/// ([`crate::mannequin::PUFF`]) two in five members hold it at a weight of their own (the clips
/// drive its breathing). Drawn from a generator of its own, so the rest of the crowd is laid out
/// as without.
fn set_own_weights(controller: &mut Controller, c: &Character, seed: u64, index: usize) -> Result<()> {
    if controller.morph_room() == 0 {
        return Ok(());
    }
    let targets = &c.mesh.morph_targets;
    let mut weights = targets.default_weights.clone();
    weights.resize(targets.targets.len(), 0.0);
    if let Some(puff) = targets.targets.iter().position(|t| t.name == crate::mannequin::PUFF) {
        let mut r = SplitMix(seed ^ (index as u64).wrapping_mul(0xA24B_AED4_963E_E407));
        weights[puff] = if r.unit() < 0.4 { r.range(0.5, 1.0) } else { 0.0 };
    }
    controller.set_morph_weights(index, &weights)
}

/// A wandering member: starts on a random course at a random phase, in a role with its layers.
fn add_wanderer(
    controller: &mut Controller,
    c: &Character,
    r: &mut SplitMix,
    tree: crate::blend::BlendTreeId,
    start: Start,
) -> Result<Agent> {
    let Start { position, heading } = start;
    let target = random_course(r);
    // A share of the crowd waves (15 %; when following a machine, only when it says so) or aims
    // at the moving target (15 %); everyone may flinch now and then.
    let pick = r.unit();
    let role = match (c.layers, pick) {
        (Some(_), p) if p < 0.15 && c.machine.is_none() => Role::Waving,
        (Some(_), p) if p < 0.15 => Role::Plain,
        (Some(_), p) if p < 0.30 => Role::Aiming,
        _ => Role::Plain,
    };
    let agent = Agent {
        position,
        heading,
        velocity: Vec2::ZERO,
        wander: Some(Wander {
            velocity: target,
            target,
            turn: r.range(-0.4, 0.4),
            timer: r.range(0.5, 6.0),
            stopped: false,
            role,
            flinch: r.range(1.0, 20.0),
            flinching: false,
            sent: None,
        }),
        teleported_at: 0,
    };
    let index = controller.add_instance(&InstanceDesc {
        time: r.unit(),
        world: c.world(agent.position, agent.heading),
        tint: tint(r),
        ..InstanceDesc::tree(tree, [target.x, target.y, 0.0, 0.0])
    })?;
    if c.machine.is_some() {
        // What it plays is the machine's from the next frame on.
        controller.set_machine(index, c.machine)?;
    }
    if c.root_motion {
        controller.set_root_motion(index, true)?;
        if let Some(w) = &agent.wander {
            controller.set_root_turn(index, w.turn)?;
        }
    }
    if let Some(l) = &c.layers {
        set_role_layers(controller, l, r, index, role)?;
    }
    Ok(agent)
}

/// The layers of instance `index`'s role: a waving or aiming arm (masked override), and an aim
/// offset for aiming.
fn set_role_layers(
    controller: &mut Controller,
    l: &LayerAssets,
    r: &mut SplitMix,
    index: usize,
    role: Role,
) -> Result<()> {
    let arm = match role {
        Role::Waving => Some((l.wave, r.unit())),
        Role::Aiming => Some((l.aim_pose, 0.0)),
        Role::Plain => None,
    };
    if let Some((clip, start)) = arm {
        let layer = Layer {
            mask: Some(l.right_arm),
            start,
            ..Layer::clip(LayerMode::Override, clip)
        };
        controller.set_layer(index, ARM_SLOT, Some(&layer), false)?;
    }
    if role == Role::Aiming {
        controller.set_layer(
            index,
            AIM_SLOT,
            Some(&Layer::tree(LayerMode::AdditiveMesh, l.aim_offset)),
            false,
        )?;
    }
    Ok(())
}

/// A member playing clip `k` of `c` at `rate` from a random phase: moving at the clip's velocity
/// when the crowd moves (by root motion, when the character has it), else in place.
fn add_player(
    controller: &mut Controller,
    c: &Character,
    r: &mut SplitMix,
    start: Start,
    k: usize,
    rate: f32,
    moving: bool,
) -> Result<Agent> {
    let Start { position, heading } = start;
    let clip = c.clips[k];
    let local_velocity = c.velocities[k] * rate;
    let velocity = {
        let v = Quat::from_rotation_y(heading) * Vec3::new(local_velocity.x, 0.0, local_velocity.y);
        Vec2::new(v.x, v.z)
    };
    let duration = c.library.clip_duration(clip).unwrap_or(1.0);
    let agent = Agent {
        position,
        heading,
        velocity: if moving { velocity } else { Vec2::ZERO },
        wander: None,
        teleported_at: 0,
    };
    let index = controller.add_instance(&InstanceDesc {
        time: r.unit() * duration,
        rate,
        world: c.world(agent.position, agent.heading),
        tint: tint(r),
        ..InstanceDesc::new(clip)
    })?;
    if c.root_motion && moving {
        controller.set_root_motion(index, true)?;
    }
    Ok(agent)
}
