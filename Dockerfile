# The service image: builds the TypeScript, then runs as a non-root user against DATABASE_URL.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY bench ./bench
COPY sql ./sql
RUN npx tsc -p tsconfig.json && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY sql ./sql
# Page assets are read at startup from src/web/assets (see src/web/assets.ts).
COPY --from=build /app/src/web/assets ./src/web/assets
USER node
EXPOSE 8080
CMD ["node", "dist/src/main.js"]
