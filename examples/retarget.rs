//! One walk played by three characters of different proportions: the mannequin, a long-legged
//! one and a short one, the two others retargeted from the mannequin on the GPU
//! (`LibraryBuilder::add_retargeted_skeleton`: one clip, no baked copy), seen from the side at a
//! few phases. Prints how high each character's lower ankle stands above its rest height over
//! the whole clip (retargeted offline, which the GPU's form agrees with): the feet stay on the
//! ground.
//!
//! ```text
//! cargo run --release --example retarget -- [--phases N] [--out PATH]
//! ```

use clap::Parser;
use glam::{Mat4, Quat, Vec3};
use std::path::PathBuf;
use wgpu_anim::gpu::{Camera, GroundRenderer, OffscreenTarget, headless_device};
use wgpu_anim::offline::retarget::{BoneMap, RetargetOptions, Retargeter};
use wgpu_anim::{
    Animator, AnimatorDesc, Clip, InstanceDesc, LibraryBuilder, LoopMode, Skeleton, SkinnedMesh, SkinnedRenderer,
    mannequin, reference,
};

/// One walk played by three characters of different proportions, side by side.
#[derive(Parser)]
#[command(name = "retarget")]
struct Args {
    /// Phases (columns) of the walk, from 1 to 8.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=8))]
    phases: u32,
    /// Where to write the picture.
    #[arg(long, value_name = "PATH", default_value = "retarget.png")]
    out: PathBuf,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(args.phases, &args.out) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// The mannequin with its legs `legs` times as long and the rest of its bones `body` times,
/// its pelvis raised or lowered so that its feet stand where the mannequin's do.
fn proportions(name: &str, legs: f32, body: f32) -> Result<Skeleton, wgpu_anim::Error> {
    let m = mannequin::skeleton();
    let thighs = [m.joint_index("thigh_l"), m.joint_index("thigh_r")];
    let in_leg = |j: usize| thighs.iter().flatten().any(|&t| t != j && m.is_descendant(j, t));
    let build = |lift: f32| {
        let joints = (0..m.joint_count())
            .map(|j| {
                let mut rest = m.rest_pose()[j];
                rest.translation *= if in_leg(j) { legs } else { body };
                if m.joint_names()[j] == "pelvis" {
                    rest.translation.y += lift;
                }
                (m.joint_names()[j].clone(), m.parents()[j].map(|p| p as usize), rest)
            })
            .collect();
        Skeleton::from_rest_pose(name, joints)
    };
    let lowest = |s: &Skeleton| {
        let model = s.rest_model_matrices();
        (0..s.joint_count()).filter(|&j| in_leg(j)).map(|j| model[j].w_axis.y).fold(f32::INFINITY, f32::min)
    };
    let first = build(0.0)?;
    build(lowest(&m) - lowest(&first))
}

/// The mannequin's mesh moved onto `skeleton`'s rest: each vertex carried by its joints from the
/// mannequin's rest to `skeleton`'s (linear blend skinning of the rest change).
fn fitted_mesh(mesh: &SkinnedMesh, from: &Skeleton, to: &Skeleton) -> SkinnedMesh {
    let (a, b) = (from.rest_model_matrices(), to.rest_model_matrices());
    let change: Vec<Mat4> = a.iter().zip(&b).map(|(a, b)| *b * a.inverse()).collect();
    let mut out = mesh.clone();
    for (v, p) in out.positions.iter_mut().enumerate() {
        let moved: Vec3 =
            (0..4).map(|i| change[usize::from(mesh.joints[v][i])].transform_point3(*p) * mesh.weights[v][i]).sum();
        *p = moved;
    }
    out
}

/// The lowest either ankle stands above its rest height over the clip, in metres.
fn lowest_ankle(skeleton: &Skeleton, clip: &Clip) -> f64 {
    let rest = skeleton.rest_model_matrices();
    let ankles = [skeleton.joint_index("foot_l"), skeleton.joint_index("foot_r")];
    (0..=60)
        .map(|k| {
            let t = f64::from(clip.duration) * f64::from(k) / 60.0;
            let model = reference::local_to_model(skeleton, &reference::sample(skeleton, clip, t));
            ankles
                .iter()
                .flatten()
                .map(|&j| model[j].w_axis.y - f64::from(rest[j].w_axis.y))
                .fold(f64::INFINITY, f64::min)
        })
        .fold(f64::INFINITY, f64::min)
}

fn run(phases: u32, out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let source = mannequin::mannequin();
    let walk = source.clips.iter().find(|c| c.name == "walk").ok_or("the mannequin has no walk")?;
    let characters = [
        ("mannequin", source.skeleton.clone()),
        ("long legs", proportions("long legs", 1.35, 1.0)?),
        ("short", proportions("short", 0.7, 0.8)?),
    ];
    // One library: the mannequin and its walk, and the two others retargeted from it, which
    // play the same walk on the GPU (no copy of the clip). The offline retarget only checks
    // the feet.
    let mut builder = LibraryBuilder::new();
    let mannequin = builder.add_skeleton(source.skeleton.clone());
    let walk_id = builder.add_clip(mannequin, walk)?;
    let mut cast = Vec::new();
    for (row, (name, skeleton)) in characters.iter().enumerate() {
        let map = BoneMap::humanoid(&source.skeleton, skeleton)?;
        let options = RetargetOptions::default();
        let r = Retargeter::new(&source.skeleton, skeleton, &map, &options)?;
        println!(
            "{name}: hip-height ratio {:.3}; lower ankle at least {:+.4} m from its rest height",
            r.height_ratio(),
            lowest_ankle(skeleton, &r.retarget(walk)?)
        );
        let id = if row == 0 {
            mannequin
        } else {
            builder.add_retargeted_skeleton(skeleton.clone(), mannequin, &map, &options)?
        };
        cast.push((id, fitted_mesh(&source.mesh, &source.skeleton, skeleton)));
    }
    let library = builder.build();
    let (device, queue) = headless_device()?;
    let count = characters.len() as u32 * phases;
    let mut animator = Animator::new(&device, &library, &AnimatorDesc::default().with_max_instances(count))?;
    for (row, (skeleton, _)) in cast.iter().enumerate() {
        for col in 0..phases {
            // Facing +x, side by side in rows from the top, standing on y = 0 of their row.
            let world = Mat4::from_rotation_translation(
                Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
                Vec3::new(col as f32 * 1.6, (cast.len() - 1 - row) as f32 * 2.4, 0.0),
            );
            animator.controller_mut().add_instance(
                &InstanceDesc::new(walk_id)
                    .with_skeleton(Some(*skeleton))
                    .with_time(walk.duration * col as f32 / phases as f32)
                    .with_rate(0.0)
                    .with_loop_mode(LoopMode::Forever)
                    .with_world(world)
                    .with_tint([[214, 160, 140, 255], [140, 180, 214, 255], [160, 200, 140, 255]][row % 3]),
            )?;
        }
    }
    let (width, height) = (240 * phases, 260 * cast.len() as u32);
    let target = OffscreenTarget::new(&device, width, height)?;
    let mut renderers = Vec::new();
    for (id, mesh) in &cast {
        let format = OffscreenTarget::COLOR_FORMAT;
        renderers.push(SkinnedRenderer::new(
            &device,
            &animator,
            *id,
            mesh,
            format,
            Some(OffscreenTarget::DEPTH_FORMAT),
            1,
        )?);
    }
    // Orthographic, from the characters' left side (+z), 2.4 m of world per row.
    let (w, h) = (phases as f32 * 1.6, cast.len() as f32 * 2.4);
    let eye = Vec3::new(w * 0.5 - 0.8, h * 0.5 - 0.2, 10.0);
    let view = glam::camera::rh::view::look_to_mat4(eye, Vec3::NEG_Z, Vec3::Y);
    let proj = glam::camera::rh::proj::directx::orthographic(-w * 0.5, w * 0.5, -h * 0.5, h * 0.5, 0.1, 20.0);
    let camera = Camera {
        view_proj: proj * view,
        eye: eye.extend(1.0),
        light_dir: Vec3::new(-0.3, -0.5, -1.0).normalize().extend(0.0),
    };
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder)?;
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
        for (row, renderer) in renderers.iter().enumerate() {
            renderer.set_camera(&queue, &camera);
            let first = row as u32 * phases;
            renderer.draw(&mut pass, &animator, first..first + phases)?;
        }
    }
    queue.submit([encoder.finish()]);
    wgpu_anim::image::save_png(out, width, height, &target.read_rgba(&device, &queue)?)?;
    println!("rows: mannequin, long legs, short; columns: the walk's phases; saved {}", out.display());
    Ok(())
}
