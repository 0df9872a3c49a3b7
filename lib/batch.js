'use strict'
// Reads the events of the batches the native side writes (their text is described in
// crates/core/src/batch.rs): deltas are built from slices of the text, everything else is
// parsed JSON.

const COLON = 58
const SAME_ITEM = 61

class BatchReader {
  text = ''
  pos = 0
  /** The item id of the previous delta, which a later delta of the batch may repeat. */
  itemId = ''

  get more() {
    return this.pos < this.text.length
  }

  next() {
    switch (this.text.charCodeAt(this.pos++)) {
      case 109: {
        const itemId = this.#item()
        return { type: 'messageDelta', itemId, delta: this.#string() }
      }
      case 99: {
        const itemId = this.#item()
        return { type: 'commandOutput', itemId, delta: this.#string() }
      }
      case 115:
        return this.#reasoning('summary')
      case 116:
        return this.#reasoning('text')
      case 74:
        return JSON.parse(this.#string())
      default:
        throw new Error(`@rennet/codex: unreadable event batch at ${this.pos - 1}`)
    }
  }

  #string() {
    const text = this.text
    let i = this.pos
    let length = 0
    let c
    while ((c = text.charCodeAt(i++)) !== COLON) length = length * 10 + c - 48
    this.pos = i + length
    return text.slice(i, i + length)
  }

  #reasoning(part) {
    const itemId = this.#item()
    const delta = this.#string()
    return { type: 'reasoningDelta', itemId, delta, part, index: Number(this.#string()) }
  }

  #item() {
    if (this.text.charCodeAt(this.pos) === SAME_ITEM) {
      this.pos++
      return this.itemId
    }
    return (this.itemId = this.#string())
  }
}

module.exports = { BatchReader }
