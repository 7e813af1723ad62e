//! The crowd's frame: members steered and moved, the frame uploaded, and what the GPU computed
//! read back.

use super::wander::{layers, wander};
use super::{Crowd, ROOT_LAG};
use glam::{Quat, Vec2, Vec3};

impl Crowd {
    /// Advances the crowd by `dt` seconds: steers and moves walkers and runners (wrapping at the
    /// field's edge) and uploads the frame's `dt` (0 while the animation is paused). With root
    /// motion the GPU moves them: the crowd sets their blend parameters and turn rates, and reads
    /// where they are back three frames late, always three (waiting, only when the GPU is further
    /// behind, so that what the crowd decides does not depend on the GPU's pace): to aim, and to
    /// move a member who left the field to the other side. Without root motion it moves them at
    /// their course's velocity.
    pub fn update(&mut self, queue: &wgpu::Queue, dt: f32) {
        let root_motion = self.character.root_motion;
        let frame = self.animator.frame() + 1;
        if self.moving && dt != 0.0 {
            self.clock += dt;
            // The target everyone aiming follows: a point circling the field at head height.
            let angle = self.clock * 0.3;
            self.target = Vec3::new(angle.cos(), 0.0, angle.sin()) * self.half_extent * 0.6 + Vec3::Y * 1.6;
            // What the crowd decides goes to its characters' state on the CPU.
            let controller = self.animator.controller_mut();
            // The heads that look follow it too (finite by construction).
            let _ = controller.set_look_at(self.target);
            let e = self.half_extent;
            for (i, a) in self.agents.iter_mut().enumerate() {
                if let Some(w) = &mut a.wander {
                    let turn = w.turn;
                    wander(controller, &self.character, &mut self.rng, i, w, dt);
                    layers(
                        controller,
                        &self.character,
                        &mut self.rng,
                        i,
                        w,
                        dt,
                        a.position,
                        a.heading,
                        self.target,
                    );
                    if root_motion {
                        if w.turn != turn {
                            let _ = controller.set_root_turn(i, w.turn);
                        }
                    } else {
                        a.heading += w.turn * dt;
                        let v = Quat::from_rotation_y(a.heading) * Vec3::new(w.velocity.x, 0.0, w.velocity.y);
                        a.velocity = Vec2::new(v.x, v.z);
                    }
                }
                if root_motion {
                    // Off the field (as last read back, and not since a teleport): to the other
                    // side, where root motion carries on.
                    let wrapped = (a.position + Vec2::splat(e)).rem_euclid(Vec2::splat(2.0 * e)) - Vec2::splat(e);
                    if wrapped.distance_squared(a.position) > 1e-6 && a.teleported_at == 0 {
                        a.position = wrapped;
                        a.teleported_at = frame;
                        let _ = controller.set_world(i, self.character.world(a.position, a.heading));
                    }
                    continue;
                }
                if a.velocity == Vec2::ZERO && a.wander.is_none() {
                    continue;
                }
                a.position += a.velocity * dt;
                a.position = (a.position + Vec2::splat(e)).rem_euclid(Vec2::splat(2.0 * e)) - Vec2::splat(e);
                // A world matrix built here is always finite and affine.
                let _ = controller.set_world(i, self.character.world(a.position, a.heading));
            }
        }
        let dt = if self.animation_paused { 0.0 } else { dt };
        if self.animator.controller().culling() {
            // The last camera set (finite: a camera's matrix).
            let _ = self.animator.controller_mut().set_cull_view(self.cull_view.get());
        }
        self.animator.prepare(queue, dt);
        self.seconds += dt;
        if let Some((marks, _)) = &self.footprints {
            marks.update(queue, &self.animator, self.seconds);
        }
        // Events per second over the last second of frames (read back a frame late).
        let events = self.read_back(frame);
        self.event_window.push_back((dt, events));
        let mut span: f32 = self.event_window.iter().map(|(d, _)| d).sum();
        while span > 1.0 && self.event_window.len() > 1 {
            span -= self.event_window.pop_front().map_or(0.0, |(d, _)| d);
        }
    }

    /// Takes in what frames before `frame` computed: with root motion the members' places in
    /// frame `frame − 3` (waiting for them if the GPU is that far behind). Returns the events of
    /// the frames read back.
    fn read_back(&mut self, frame: u64) -> usize {
        let mut got = self.animator.take_readbacks();
        let wanted = frame.saturating_sub(ROOT_LAG);
        let watching = self.character.root_motion && self.roams && self.moving && wanted > 0;
        if watching && self.held.iter().chain(&got).all(|r| r.frame < wanted) {
            self.animator.wait_readbacks();
            got.extend(self.animator.take_readbacks());
        }
        let events = got.iter().map(|r| r.events.len()).sum();
        self.count_states(&got);
        if !watching {
            return events;
        }
        // Only the frames whose places are still to be used are kept.
        self.held.extend(got);
        self.held.retain(|r| r.frame >= wanted);
        let Some(r) = self.held.iter().find(|r| r.frame == wanted) else {
            return events;
        };
        for (a, root) in self.agents.iter_mut().zip(&r.outputs) {
            if a.teleported_at != 0 && r.frame < a.teleported_at {
                continue;
            }
            a.teleported_at = 0;
            let w = &root.world;
            a.position = Vec2::new(w.x.w, w.z.w);
            // The heading of the model's +Z in the world.
            a.heading = w.x.z.atan2(w.z.z);
        }
        events
    }

    /// Clip events the GPU fired per second of animation, over the last second (footsteps, for
    /// the built-in character); 0 when the character has none.
    #[must_use]
    pub fn events_per_second(&self) -> f32 {
        let span: f32 = self.event_window.iter().map(|(d, _)| d).sum();
        let events: usize = self.event_window.iter().map(|(_, n)| n).sum();
        if span > 0.0 { events as f32 / span } else { 0.0 }
    }
}
