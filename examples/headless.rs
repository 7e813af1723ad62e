//! Renders the built-in crowd — or a crowd of the character of a glTF file — to a PNG without a
//! window.
//!
//! ```text
//! cargo run --release --example headless -- [--model PATH] [--count N] [--time SECONDS] [--size WxH] [--out PATH]
//! ```
//! Defaults: the mannequin, 400 characters, 2.0 s into the animation, 1280x720, `crowd.png`.

use clap::Parser;
use std::path::PathBuf;
use wgpu_anim::gpu::{OffscreenTarget, headless_device};
use wgpu_anim::image::save_png;
use wgpu_anim::scene::{Character, Crowd, CrowdDesc};

/// Renders the built-in crowd, or a crowd of the character of a glTF file, to a PNG without a
/// window.
#[derive(Parser)]
#[command(name = "headless")]
struct Args {
    /// A crowd of the character of a glTF file [default: the built-in mannequin].
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// Characters in the crowd.
    #[arg(long, value_name = "N", default_value_t = 400)]
    count: u32,
    /// Seconds into the animation.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0, value_parser = seconds)]
    time: f32,
    /// Image size in pixels.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = size)]
    size: (u32, u32),
    /// Where to write the picture.
    #[arg(long, value_name = "PATH", default_value = "crowd.png")]
    out: PathBuf,
}

/// A non-negative, finite number of seconds.
fn seconds(v: &str) -> Result<f32, String> {
    v.parse::<f32>()
        .ok()
        .filter(|t| t.is_finite() && *t >= 0.0)
        .ok_or_else(|| format!("'{v}' is not a non-negative number of seconds"))
}

/// `WxH`, both sides at least one pixel.
fn size(v: &str) -> Result<(u32, u32), String> {
    v.split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
        .filter(|&(w, h)| w > 0 && h > 0)
        .ok_or_else(|| format!("'{v}' is not WxH in pixels"))
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let (width, height) = args.size;
    let (device, queue) = headless_device()?;
    let target = OffscreenTarget::new(&device, width, height)?;
    let character = match &args.model {
        Some(path) => Character::from_gltf(path)?,
        None => Character::mannequin(),
    };
    let mut crowd = Crowd::with_character(
        &device,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
        &CrowdDesc { count: args.count, ..Default::default() },
        character,
    )?;
    crowd.set_camera(&queue, &crowd.overview_camera(width as f32 / height as f32));
    // Simulate at 30 frames per second up to the requested time (the crowd's agents decide,
    // turn and ease their velocities frame by frame), then encode the last frame with the picture.
    let steps = (args.time * 30.0).ceil().max(1.0) as u32;
    for _ in 1..steps {
        crowd.update(&queue, args.time / steps as f32);
        let mut encoder = device.create_command_encoder(&Default::default());
        crowd.encode(&mut encoder)?;
        queue.submit([encoder.finish()]);
    }
    crowd.update(&queue, args.time / steps as f32);
    let mut encoder = device.create_command_encoder(&Default::default());
    crowd.encode(&mut encoder)?;
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, wgpu_anim::gpu::GroundRenderer::SKY);
        crowd.draw(&mut pass)?;
    }
    queue.submit([encoder.finish()]);
    let rgba = target.read_rgba(&device, &queue)?;
    save_png(&args.out, width, height, &rgba)?;
    println!(
        "{} characters ({}) at t = {} s rendered to {} ({}x{})",
        args.count,
        crowd.character.name,
        args.time,
        args.out.display(),
        width,
        height
    );
    Ok(())
}

fn main() {
    if let Err(e) = run(&Args::parse()) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
