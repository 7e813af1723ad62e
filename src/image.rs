//! Writing pictures: headless renders, screenshots and plots are saved as PNG.

use crate::error::{Error, Result};
use std::path::Path;

/// Saves tightly packed RGBA8 rows (top row first) as a PNG file, creating parent folders.
pub fn save_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<()> {
    let err = |what: String| Error::Asset {
        file: path.display().to_string(),
        what,
    };
    if rgba.len() != width as usize * height as usize * 4 {
        return Err(err(format!(
            "{} bytes is not a {width}x{height} RGBA image",
            rgba.len()
        )));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| err(format!("cannot create the folder: {e}")))?;
    }
    let file = std::fs::File::create(path).map_err(|e| err(format!("cannot create: {e}")))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| err(e.to_string()))?;
    writer.write_image_data(rgba).map_err(|e| err(e.to_string()))?;
    writer.finish().map_err(|e| err(e.to_string()))
}
