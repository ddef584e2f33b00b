/** The conversation context counts tokens with the engine's one tokenizer. */
export { loadTokenCounter, type TokenCounter } from '../tokens';
