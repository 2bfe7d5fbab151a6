// Just enough PNG decoding (8-bit RGB/RGBA, not interlaced — what Chromium
// writes) to compare two screenshots pixel by pixel, so the committed
// screenshot.png is only rewritten when the view really changed.
import { inflateSync } from "node:zlib";

export interface Pixels {
  width: number;
  height: number;
  channels: number;
  data: Buffer;
}

export function decodePng(buf: Buffer): Pixels {
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error("not a PNG");
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString("latin1", pos + 4, pos + 8);
    const body = buf.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const depth = body[8];
      const colorType = body[9];
      const interlace = body[12];
      if (depth !== 8 || interlace !== 0 || (colorType !== 2 && colorType !== 6)) {
        throw new Error(`unsupported PNG (depth ${depth}, color type ${colorType}, interlace ${interlace})`);
      }
      channels = colorType === 6 ? 4 : 3;
    } else if (type === "IDAT") {
      idat.push(body);
    } else if (type === "IEND") {
      break;
    }
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const data = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    const row = y * stride;
    const prev = row - stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? data[row + x - channels] : 0;
      const b = y > 0 ? data[prev + x] : 0;
      const c = x >= channels && y > 0 ? data[prev + x - channels] : 0;
      let v = raw[src + x];
      switch (filter) {
        case 1:
          v += a;
          break;
        case 2:
          v += b;
          break;
        case 3:
          v += (a + b) >> 1;
          break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
      }
      data[row + x] = v & 0xff;
    }
  }
  return { width, height, channels, data };
}

/** How many pixels differ between two images of the same size (Infinity when the sizes differ). */
export function differingPixels(a: Pixels, b: Pixels): number {
  if (a.width !== b.width || a.height !== b.height || a.channels !== b.channels) return Infinity;
  let n = 0;
  for (let i = 0; i < a.data.length; i += a.channels) {
    for (let k = 0; k < a.channels; k++) {
      if (a.data[i + k] !== b.data[i + k]) {
        n++;
        break;
      }
    }
  }
  return n;
}
